-- Each agent's address lookup table (docs/architecture.md, "Lookup tables"): its batched opens,
-- settlements and refunds load the accounts every batch names from it. One per agent and network,
-- whichever relayer instance first needs it claims the row, then creates the table on chain.
CREATE TABLE lookup_tables (
  network text NOT NULL,
  agent text NOT NULL,
  address text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (network, agent)
);
