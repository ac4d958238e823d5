import { type HandlersOf, invalid } from '@strata/common';
import type { AlertRuleServiceService } from '@strata/proto/alerting/v1/alert_rules';
import type { AlertRuleService } from './alert-rule-service.js';

/** gRPC handlers of the master's AlertRuleService. */
export function alertRuleHandlers(service: () => AlertRuleService): HandlersOf<typeof AlertRuleServiceService> {
  return {
    listAlertRules: async (req) => ({ rules: await service().list(req.accountId) }),
    getAlertRule: async (req) => ({ rule: await service().get(req.accountId, req.alertId) }),
    putAlertRule: async (req) => {
      if (!req.definition) throw invalid('definition is required.');
      if (!req.actorUserId) throw invalid('actorUserId is required.');
      return service().put(req.accountId, req.alertId, req.definition, req.actorUserId);
    },
    deleteAlertRule: async (req) => ({ deleted: await service().delete(req.accountId, req.alertId) }),
    listAlertRecords: async (req) => ({ records: await service().records(req.accountId, req.alertId) }),
    listAlertEvaluations: async (req) => ({ evaluations: await service().evaluations(req.accountId, req.alertId, req.limit) }),
    claimAlertEvaluations: async (req) => ({ evaluations: await service().claim(req.max) }),
    completeAlertEvaluation: async (req) => {
      const { applied, evaluation } = await service().complete(req);
      return { applied, evaluation };
    },
  };
}
