{{/*
Names, labels and the per-role Strata config files. Every Strata pod runs
`strata start --config /etc/strata/strata.yaml`; the file is the `config` value with the keys the
chart owns for that role laid over it.
*/}}

{{- define "strata.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects; role suffixes are appended to it, so keep it short. */}}
{{- define "strata.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "strata.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of one component: (dict "ctx" $ "component" "worker"). */}}
{{- define "strata.selectorLabels" -}}
app.kubernetes.io/name: {{ include "strata.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "strata.labels" -}}
helm.sh/chart: {{ include "strata.chart" .ctx }}
{{ include "strata.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: strata
{{- end }}

{{- define "strata.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "strata.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "strata.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Names of the headless services that give StatefulSet pods their stable DNS names. */}}
{{- define "strata.workerService" -}}{{ include "strata.fullname" . }}-worker{{- end }}
{{- define "strata.databaseService" -}}{{ include "strata.fullname" . }}-database{{- end }}
{{- define "strata.etcdName" -}}{{ include "strata.fullname" . }}-etcd{{- end }}

{{- define "strata.jwtSecretName" -}}
{{- default (printf "%s-jwt" (include "strata.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{/* DNS suffix of a headless service: <service>.<namespace>.svc.<clusterDomain>. */}}
{{- define "strata.serviceDomain" -}}
{{- printf "%s.%s.svc.%s" .service .ctx.Release.Namespace .ctx.Values.clusterDomain }}
{{- end }}

{{/* etcd client URLs: the external list, or one URL per bundled member. */}}
{{- define "strata.etcdEndpoints" -}}
{{- $urls := list }}
{{- if .Values.etcd.endpoints }}
{{- $urls = .Values.etcd.endpoints }}
{{- else }}
{{- $name := include "strata.etcdName" . }}
{{- $domain := include "strata.serviceDomain" (dict "ctx" . "service" $name) }}
{{- range $i := until (int .Values.etcd.bundled.replicas) }}
{{- $urls = append $urls (printf "https://%s-%d.%s:2379" $name $i $domain) }}
{{- end }}
{{- end }}
{{- toJson $urls }}
{{- end }}

{{/*
The config file of one role ("gateway", "worker" or "database"): the `config` value with the keys
the chart owns laid over it. Data lives under /var/lib/strata (a volume in every pod); endpoints
listen on all interfaces and each StatefulSet pod advertises its own DNS name through
STRATA_<ROLE>_ADVERTISEENDPOINT, set in the pod's environment.
*/}}
{{- define "strata.roleConfig" -}}
{{- $ctx := .ctx }}
{{- $v := $ctx.Values }}
{{- $base := deepCopy $v.config }}
{{- if ne .role "database" }}
{{- $_ := unset $base "setupService" }}
{{- end }}
{{- $owned := dict
  "dataRoot" "/var/lib/strata"
  "database" (dict "enable" (eq .role "database"))
  "backend" (dict "enable" (eq .role "worker"))
  "gateway" (dict "enable" (eq .role "gateway"))
  "ops" (dict "enable" true "host" "0.0.0.0" "port" (int $v.ports.ops))
  "etcd" (dict "endpoints" (include "strata.etcdEndpoints" $ctx | fromJsonArray))
}}
{{- if eq .role "database" }}
{{- $_ := set $owned.database "endpoint" (printf "0.0.0.0:%d" (int $v.ports.database)) }}
{{- $_ := set $owned.database "dataPath" "/var/lib/strata/database" }}
{{- end }}
{{- if eq .role "worker" }}
{{- $_ := set $owned.backend "endpoint" (printf "0.0.0.0:%d" (int $v.ports.worker)) }}
{{- $_ := set $owned.backend "dataPath" "/var/lib/strata/backend" }}
{{- $_ := set $owned.backend "minimumFreeSpaceBytes" (int64 $v.worker.minimumFreeSpaceBytes) }}
{{- $_ := set $owned.backend "replicationFactor" (int $v.worker.replicationFactor) }}
{{- $_ := set $owned.backend "sealAgeSeconds" (int $v.worker.sealAgeSeconds) }}
{{- end }}
{{- if eq .role "gateway" }}
{{- $_ := set $owned.gateway "host" "0.0.0.0" }}
{{- $_ := set $owned.gateway "port" (int $v.gateway.port) }}
{{- end }}
{{- /* Mutual TLS: the role's own Secret, mounted at /etc/strata-tls (strata.tlsVolumes). */}}
{{- $_ := set $owned "internalTls" (dict
  "caFile" "/etc/strata-tls/ca.crt"
  "certFile" "/etc/strata-tls/tls.crt"
  "keyFile" "/etc/strata-tls/tls.key"
  "refreshIntervalSeconds" (int $v.internalTls.refreshIntervalSeconds)) }}
{{- if not $v.etcd.endpoints }}
{{- /* The bundled etcd trusts the release's CA: the role's own certificate is its etcd client certificate. */}}
{{- $_ := set $owned.etcd "tls" (dict "caFile" "/etc/strata-tls/ca.crt" "certFile" "/etc/strata-tls/tls.crt" "keyFile" "/etc/strata-tls/tls.key") }}
{{- else if $v.etcd.external.tlsSecret }}
{{- $_ := set $owned.etcd "tls" (dict "caFile" "/etc/strata-etcd-tls/ca.crt" "certFile" "/etc/strata-etcd-tls/tls.crt" "keyFile" "/etc/strata-etcd-tls/tls.key") }}
{{- end }}
{{- if and $v.etcd.endpoints $v.etcd.external.username }}
{{- $_ := set $owned.etcd "auth" (dict "username" $v.etcd.external.username) }}
{{- end }}
{{- toYaml (mustMergeOverwrite $base $owned) }}
{{- end }}

{{/* Environment every Strata container gets: its pod's name and namespace, and extraEnv. */}}
{{- define "strata.commonEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: HOME
  value: /tmp
{{- if and .Values.etcd.endpoints .Values.etcd.external.username .Values.etcd.external.passwordSecret }}
- name: STRATA_ETCD_AUTH_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.etcd.external.passwordSecret }}
      key: {{ .Values.etcd.external.passwordKey }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod annotations: the config checksum (rolls pods on config changes) and Prometheus scraping. */}}
{{- define "strata.podAnnotations" -}}
checksum/config: {{ include (print .ctx.Template.BasePath "/configmap.yaml") .ctx | sha256sum }}
{{- if .ctx.Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .ctx.Values.ports.ops | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- with .extra }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Probes of the ops server (/healthz, /readyz on ports.ops) for database and worker pods. */}}
{{- define "strata.opsProbes" -}}
{{- $p := .Values.probes -}}
startupProbe:
  httpGet:
    path: /healthz
    port: ops
  periodSeconds: {{ $p.startup.periodSeconds }}
  failureThreshold: {{ $p.startup.failureThreshold }}
livenessProbe:
  httpGet:
    path: /healthz
    port: ops
  periodSeconds: {{ $p.liveness.periodSeconds }}
  timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
  failureThreshold: {{ $p.liveness.failureThreshold }}
readinessProbe:
  httpGet:
    path: /readyz
    port: ops
  periodSeconds: {{ $p.readiness.periodSeconds }}
  timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
  failureThreshold: {{ $p.readiness.failureThreshold }}
{{- end }}

{{/* The config volume (the role's key of the ConfigMap, mounted as /etc/strata/strata.yaml) and the role's TLS Secret. */}}
{{- define "strata.configVolume" -}}
- name: config
  configMap:
    name: {{ include "strata.fullname" .ctx }}-config
    items:
      - key: {{ .role }}.yaml
        path: strata.yaml
- name: tmp
  emptyDir: {}
{{ include "strata.tlsVolumes" . }}
{{- end }}

{{/* Secret of a role's internal-TLS certificate: (dict "ctx" $ "role" "worker"). */}}
{{- define "strata.tlsSecretName" -}}
{{- printf "%s-tls-%s" (include "strata.fullname" .ctx) .role }}
{{- end }}

{{/* The role's certificate (and the external etcd's) as volumes: (dict "ctx" $ "role" "worker"). */}}
{{- define "strata.tlsVolumes" -}}
- name: internal-tls
  secret:
    secretName: {{ include "strata.tlsSecretName" . }}
    defaultMode: 0400
{{- if and .ctx.Values.etcd.endpoints .ctx.Values.etcd.external.tlsSecret }}
- name: etcd-tls
  secret:
    secretName: {{ .ctx.Values.etcd.external.tlsSecret }}
    defaultMode: 0400
{{- end }}
{{- end }}

{{- define "strata.tlsMounts" -}}
- name: internal-tls
  mountPath: /etc/strata-tls
  readOnly: true
{{- if and .Values.etcd.endpoints .Values.etcd.external.tlsSecret }}
- name: etcd-tls
  mountPath: /etc/strata-etcd-tls
  readOnly: true
{{- end }}
{{- end }}

{{- define "strata.configMounts" -}}
- name: config
  mountPath: /etc/strata
  readOnly: true
- name: tmp
  mountPath: /tmp
{{ include "strata.tlsMounts" . }}
{{- end }}

{{- define "strata.containerArgs" -}}
args: ["start", "--config", "/etc/strata/strata.yaml"]
{{- end }}
