#!/usr/bin/env node
// agent-market-reconcile: compares the relayer's database with the chain, with the relayer's own
// configuration (environment), prints every difference and exits 1 if there is any.
import { createPool } from "@agent-market/service";
import { ChainService } from "./chain/chain-service.js";
import { PriorityFees } from "./chain/priority-fee.js";
import { TransactionSender } from "./chain/tx-sender.js";
import { ConfigError, parseConfig } from "./config.js";
import { reconcile } from "./executions/reconcile.js";

async function main(): Promise<number> {
  let config;
  try {
    config = parseConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const db = createPool(config.database_url, { max_connections: 4 });
  const chain = new ChainService(config.networks);
  const senders = Object.fromEntries(
    chain.networks.map((network) => [network, new TransactionSender(
        chain.rpc(network),
        config.networks[network]!.relayer_keypair,
        chain.programId(network),
        new PriorityFees(chain.rpc(network), config.priority_fee),
      )]),
  );
  let differences = 0;
  try {
    for (const network of chain.networks) {
      const report = await reconcile(db, chain, senders, network);
      process.stdout.write(
        `${network}: ${report.executions} executions, ${report.open_escrows_on_chain} open escrows on chain, ` +
          `${report.differences.length} differences\n`,
      );
      for (const difference of report.differences) process.stdout.write(`  ${JSON.stringify(difference)}\n`);
      differences += report.differences.length;
    }
  } finally {
    chain.close();
    await db.end();
  }
  return differences === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`reconciliation failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
