{{- /*
First sign-in (docs/operations.md "First sign-in on Kubernetes"): when no setupService user is
configured (neither config.setupService.users nor setupServiceUsersSecret), the chart provisions a
first global admin whose generated password lives in the Secret <fullname>-first-admin
(first-admin-secret.yaml), the way `npm start` does on a single node. These helpers keep the
other templates' share of it to one include each.
*/}}

{{/* "true" when the chart provisions the first admin. */}}
{{- define "strata.firstAdmin.active" -}}
{{- if and .Values.firstAdmin.enabled (not .Values.setupServiceUsersSecret.name) (empty (dig "setupService" "users" (list) .Values.config)) -}}
true
{{- end -}}
{{- end -}}

{{- define "strata.firstAdmin.secretName" -}}
{{- printf "%s-first-admin" (include "strata.fullname" .) -}}
{{- end -}}

{{/* Whether the chart also provisions the first admin's account (no account configured). */}}
{{- define "strata.firstAdmin.ownAccount" -}}
{{- if empty (dig "setupService" "accounts" (list) .Values.config) -}}
true
{{- end -}}
{{- end -}}

{{/*
Environment of the database pods: turns provisioning on and reads the first admin (with its
password) from the Secret, so the password never enters the ConfigMap.
*/}}
{{- define "strata.firstAdmin.env" -}}
{{- if include "strata.firstAdmin.active" . }}
- name: STRATA_SETUPSERVICE_ENABLE
  value: "true"
- name: STRATA_SETUPSERVICE_PROVISION
  value: "true"
{{- if include "strata.firstAdmin.ownAccount" . }}
- name: STRATA_SETUPSERVICE_ACCOUNTS
  value: {{ list (dict "accountId" .Values.firstAdmin.accountId "accountName" .Values.firstAdmin.accountName) | toJson | quote }}
{{- end }}
- name: STRATA_SETUPSERVICE_USERS
  valueFrom:
    secretKeyRef:
      name: {{ include "strata.firstAdmin.secretName" . }}
      key: users.json
{{- end }}
{{- end -}}

{{/* The NOTES.txt lines telling how to sign in as the first admin. */}}
{{- define "strata.firstAdmin.notes" -}}
{{- if include "strata.firstAdmin.active" . }}

First sign-in: the user "{{ .Values.firstAdmin.username }}" (global admin) was provisioned with a generated password.
Read it with:
  kubectl -n {{ .Release.Namespace }} get secret {{ include "strata.firstAdmin.secretName" . }} -o jsonpath='{.data.password}' | base64 -d; echo
Then sign in (with the port-forward above):
  curl -s -X POST localhost:5000/auth/token -H 'content-type: application/json' \
    -d "{\"username\":\"{{ .Values.firstAdmin.username }}\",\"password\":\"$(kubectl -n {{ .Release.Namespace }} get secret {{ include "strata.firstAdmin.secretName" . }} -o jsonpath='{.data.password}' | base64 -d)\"}"
Change it afterwards with PUT /whoami/password. The Secret is kept across upgrades and uninstalls.
{{- end }}
{{- end -}}
