// Every route of the API, one file each.
import type { FastifyInstance } from "fastify";

import type { Services } from "../app.js";
import { registerAgentsCreate } from "./agents-create.js";
import { registerAgentsGet } from "./agents-get.js";
import { registerAgentsList } from "./agents-list.js";
import { registerAgentsPause } from "./agents-pause.js";
import { registerAgentsResume } from "./agents-resume.js";
import { registerAgentsRetire } from "./agents-retire.js";
import { registerAgentsUpdate } from "./agents-update.js";
import { registerAuthNonce } from "./auth-nonce.js";
import { registerAuthSessionCreate } from "./auth-session-create.js";
import { registerAuthSessionDelete } from "./auth-session-delete.js";
import { registerAuthSessionGet } from "./auth-session-get.js";
import { registerExecutionsCreate } from "./executions-create.js";
import { registerExecutionsGet } from "./executions-get.js";
import { registerExecutionsList } from "./executions-list.js";
import { registerKeysCreate } from "./keys-create.js";
import { registerKeysGet } from "./keys-get.js";
import { registerKeysList } from "./keys-list.js";
import { registerKeysRevoke } from "./keys-revoke.js";
import { registerMarketplace } from "./marketplace.js";
import { registerOpenApi } from "./openapi.js";
import { registerReference } from "./reference.js";
import { registerSubscriptionsCreate } from "./subscriptions-create.js";
import { registerWalletAllowance } from "./wallet-allowance.js";
import { registerWalletAllowanceRevoke } from "./wallet-allowance-revoke.js";
import { registerWalletFunding } from "./wallet-funding.js";
import { registerWhoami } from "./whoami.js";

export function registerRoutes(app: FastifyInstance, services: Services): void {
  registerMarketplace(app, services);
  registerAuthNonce(app, services);
  registerAuthSessionCreate(app, services);
  registerAuthSessionGet(app, services);
  registerAuthSessionDelete(app, services);
  registerWhoami(app, services);
  registerKeysCreate(app, services);
  registerKeysList(app, services);
  registerKeysGet(app, services);
  registerKeysRevoke(app, services);
  registerWalletFunding(app, services);
  registerWalletAllowance(app, services);
  registerWalletAllowanceRevoke(app, services);
  registerAgentsCreate(app, services);
  registerAgentsList(app, services);
  registerAgentsGet(app, services);
  registerAgentsUpdate(app, services);
  registerAgentsPause(app, services);
  registerAgentsResume(app, services);
  registerAgentsRetire(app, services);
  registerExecutionsCreate(app, services);
  registerExecutionsGet(app, services);
  registerExecutionsList(app, services);
  registerSubscriptionsCreate(app, services);
  registerOpenApi(app);
  registerReference(app);
}
