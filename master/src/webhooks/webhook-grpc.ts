import type { HandlersOf } from '@strata/common';
import type { WebhookServiceService } from '@strata/proto/webhooks/v1/webhooks';
import type { WebhookService } from './webhook-service.js';

/** gRPC handlers of the master's WebhookService. */
export function webhookHandlers(service: () => WebhookService): HandlersOf<typeof WebhookServiceService> {
  return {
    listWebhooks: async (req) => ({ webhooks: await service().list(req.accountId) }),
    getWebhook: async (req) => ({ webhook: await service().get(req.accountId, req.webhookId) }),
    putWebhook: async (req) => service().put(req),
    deleteWebhook: async (req) => ({ deleted: await service().delete(req.accountId, req.webhookId) }),
    listWebhookDeliveries: async (req) => ({ deliveries: await service().deliveries(req.accountId, req.webhookId, req.limit) }),
  };
}
