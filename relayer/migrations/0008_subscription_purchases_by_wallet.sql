-- A wallet's purchases of one agent's subscription, looked up at each new purchase: two purchases
-- signed with the same blockhash and fee shard would be the same transaction (the second a replay
-- the chain refuses), so a new one must not repeat the signature of one already recorded.
CREATE INDEX subscription_purchases_wallet_agent ON subscription_purchases (wallet, agent, network);
