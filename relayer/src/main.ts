#!/usr/bin/env node
// The relayer process: configuration from the environment, migrations, then the API until
// SIGINT/SIGTERM, when it stops taking requests and finishes those in flight.
import { buildApp } from "./app.js";
import { ConfigError, parseConfig, type RelayerConfig } from "./config.js";
import { loggerOptions } from "./logger.js";
import { createServices } from "./services.js";

async function main(): Promise<void> {
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
  // A terminal's Ctrl-C reaches the whole process group, so the launcher's SIGTERM may follow.
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await app.close();
    await services.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`relayer failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
