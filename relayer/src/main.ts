#!/usr/bin/env node
// The relayer process: configuration from the environment, migrations, then the API until
// SIGINT/SIGTERM. A stop takes no new requests and gives those in flight SHUTDOWN_GRACE_MS; an
// execution still running then is handed to the finish job (its row says where it stands), and
// the process exits within SHUTDOWN_BOUND_MS whatever happens. A second signal exits at once.
import { installProcessHandlers, reportBackgroundError } from "@agent-market/service";

import { buildApp } from "./app.js";
import { ConfigError, parseConfig, type RelayerConfig } from "./config.js";
import { loggerOptions } from "./logger.js";
import { createServices } from "./services.js";
import { SHUTDOWN_BOUND_MS, SHUTDOWN_GRACE_MS } from "./shutdown.js";

async function main(): Promise<void> {
  installProcessHandlers();
  let config: RelayerConfig;
  try {
    config = parseConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const services = await createServices(config);
  const app = await buildApp(services, loggerOptions(config.log_level));
  await services.startWorkers();
  await app.listen({ host: config.host, port: config.port });
  let stopping = false;
  // A terminal's Ctrl-C reaches the whole process group, so the launcher's SIGTERM may follow:
  // that second signal is one an operator also sends to mean "now".
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`relayer: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`relayer: ${signal}, stopping (at most ${SHUTDOWN_BOUND_MS / 1000} s)\n`);
    setTimeout(() => {
      process.stderr.write("relayer: the stop took too long, exiting\n");
      process.exit(1);
    }, SHUTDOWN_BOUND_MS).unref();
    const closed = app.close().then(() => true);
    const drained = await Promise.race([closed, new Promise<false>((resolve) => setTimeout(() => resolve(false), SHUTDOWN_GRACE_MS))]);
    if (!drained) {
      const handed = await services.handOverExecutions().catch((error: unknown) => {
        reportBackgroundError("shutdown handover", error);
        return 0;
      });
      process.stderr.write(`relayer: ${handed} executions in flight handed to the finish job\n`);
    }
    await services.close().catch((error: unknown) => reportBackgroundError("shutdown", error));
    process.exit(0);
  };
  process.on("SIGINT", (signal) => void stop(signal));
  process.on("SIGTERM", (signal) => void stop(signal));
}

main().catch((error: unknown) => {
  process.stderr.write(`relayer failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
