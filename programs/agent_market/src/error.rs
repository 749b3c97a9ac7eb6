use anchor_lang::prelude::*;

#[error_code]
pub enum AgentMarketError {
    #[msg("Signer is not the market authority")]
    NotMarketAuthority,
    #[msg("Signer is not the market relayer")]
    NotRelayer,
    #[msg("Signer is not the market arbiter")]
    NotArbiter,
    #[msg("Signer is not the agent's creator")]
    NotAgentCreator,
    #[msg("Signer is not the escrow's payer")]
    NotEscrowPayer,
    #[msg("Mint is not the market's USDC mint")]
    InvalidMint,
    #[msg("Token account does not hold the market's USDC mint")]
    TokenAccountMintMismatch,
    #[msg("Token account is not owned by the expected wallet")]
    TokenAccountOwnerMismatch,
    #[msg("Treasury is not the market's treasury account")]
    TreasuryMismatch,
    #[msg("Market parameters are out of range")]
    InvalidMarketParams,
    #[msg("Fee shard index is out of range")]
    FeeShardOutOfRange,
    #[msg("New escrows are paused")]
    EscrowsPaused,
    #[msg("Endpoint URL is empty or too long")]
    InvalidEndpoint,
    #[msg("Signing key is all zeros")]
    InvalidSigningKey,
    #[msg("Pricing has a zero price, period or call count")]
    InvalidPricing,
    #[msg("Max execution time is zero or above the limit")]
    InvalidMaxExecutionTime,
    #[msg("Amount must be greater than zero")]
    InvalidAmount,
    #[msg("Collateral is below the market minimum")]
    CollateralBelowMinimum,
    #[msg("Agent is retired")]
    AgentRetired,
    #[msg("Agent is not retired")]
    AgentNotRetired,
    #[msg("Collateral cooldown has not ended")]
    CollateralCooldownActive,
    #[msg("Agent has open disputes")]
    OpenDisputes,
    #[msg("Agent's pricing has no subscription")]
    PricingHasNoSubscription,
    #[msg("Agent requires an active subscription")]
    SubscriptionRequired,
    #[msg("Subscription does not belong to this escrow")]
    SubscriptionMismatch,
    #[msg("Payer's USDC balance is below the amount")]
    InsufficientBalance,
    #[msg("Payer's delegate allowance to the market is below the amount")]
    InsufficientAllowance,
    #[msg("Escrow belongs to another agent")]
    EscrowAgentMismatch,
    #[msg("Token account is not the payer's account recorded in the escrow")]
    PayerTokenAccountMismatch,
    #[msg("Token account is not the agent's payout account")]
    PayoutAccountMismatch,
    #[msg("Account is not the one that paid the rent")]
    RentPayerMismatch,
    #[msg("Escrow deadline has passed")]
    EscrowExpired,
    #[msg("Escrow deadline has not passed")]
    EscrowNotExpired,
    #[msg("Account is not the instructions sysvar")]
    InvalidInstructionsSysvar,
    #[msg("No Ed25519 verification instruction precedes settle")]
    MissingEd25519Instruction,
    #[msg("Ed25519 instruction must verify exactly one signature over data it carries itself")]
    MalformedEd25519Instruction,
    #[msg("Result was not signed by the agent's signing key")]
    SignerKeyMismatch,
    #[msg("Signed message is not this execution's result digest")]
    DigestMismatch,
    #[msg("Dispute window has closed")]
    DisputeWindowClosed,
    #[msg("Dispute window is still open")]
    DisputeWindowOpen,
    #[msg("This settlement was already disputed")]
    AlreadyDisputed,
    #[msg("Dispute belongs to another agent")]
    DisputeAgentMismatch,
    #[msg("Account is not the dispute's payer")]
    DisputePayerMismatch,
    #[msg("Upheld disputes slash a positive amount; rejected ones slash nothing")]
    InvalidSlashAmount,
    #[msg("Arithmetic overflow")]
    MathOverflow,
    #[msg("The call or period costs more than the maximum the payer accepted")]
    PriceAboveMaximum,
    #[msg("Pay-per-use price is below the market's minimum price per call")]
    PriceBelowMinimum,
    #[msg("Hybrid overage price is below the market's minimum price per call")]
    OveragePriceBelowMinimum,
    #[msg("Subscription period price per included call is below the market's minimum price per call")]
    PeriodPriceBelowMinimum,
    #[msg("Payout account is owned by an account of the program (an agent, the market) or its delegate")]
    PayoutAccountOwnedByProgram,
    #[msg("Subscription period is longer than 366 days")]
    SubscriptionPeriodTooLong,
    #[msg("Signer is not the program's upgrade authority")]
    NotUpgradeAuthority,
    #[msg("Signer is not the market's proposed authority")]
    NotProposedAuthority,
    #[msg("The payer's live subscription was bought under other pricing; buy again once it expires")]
    SubscriptionTermsChanged,
    #[msg("Subscription already runs more than a period ahead")]
    SubscriptionPaidAhead,
    #[msg("No Ed25519 verification of the signing-key proof precedes this instruction: the signing key must sign it")]
    MissingSigningKeyProof,
    #[msg("Signing-key proof was signed by another key than the agent's signing key")]
    SigningKeyProofKeyMismatch,
    #[msg("Signing-key proof was signed over another agent or creator")]
    SigningKeyProofDigestMismatch,
    #[msg("Payout owner is not the owner of the payout account")]
    PayoutOwnerMismatch,
    #[msg("A batch settles at least one escrow")]
    EmptyBatch,
    #[msg("A batch settles at most MAX_SETTLE_BATCH escrows")]
    BatchTooLarge,
    #[msg("A batch needs exactly one result hash per escrow")]
    ResultHashCountMismatch,
    #[msg("An escrow appears twice in one batch")]
    DuplicateEscrow,
    #[msg("A batched escrow's rent was not paid by the relayer signing the batch")]
    BatchRentPayerNotRelayer,
    #[msg("A batched escrow account is not writable")]
    EscrowNotWritable,
    #[msg("Ed25519 instruction must verify one batch signature or one signature per escrow")]
    BatchSignatureCountMismatch,
    #[msg("Receipt log belongs to another agent")]
    ReceiptLogAgentMismatch,
    #[msg("Receipt log is full: its oldest filled tree is still within the dispute window")]
    ReceiptLogFull,
    #[msg("Merkle proof must carry one hash per level of the receipt tree")]
    InvalidProofLength,
    #[msg("Leaf and proof do not lead to a root the receipt log holds")]
    UnknownReceiptRoot,
    #[msg("A batch opens at least one escrow")]
    EmptyOpenBatch,
    #[msg("A batch opens at most MAX_OPEN_BATCH escrows")]
    OpenBatchTooLarge,
    #[msg("A batched open needs exactly three accounts per item: escrow, payer token account, subscription")]
    OpenBatchAccountCountMismatch,
    #[msg("An execution id appears twice in one batch")]
    DuplicateExecutionId,
    #[msg("A batched escrow account is not at its execution id's address")]
    EscrowAddressMismatch,
    #[msg("A batched subscription account is not at the payer's subscription address for this agent")]
    SubscriptionAddressMismatch,
    #[msg("Dispute was already resolved")]
    DisputeAlreadyResolved,
    #[msg("Dispute is not resolved yet")]
    DisputeNotResolved,
    #[msg("A batch's units are one count per escrow, or none when every count is 0")]
    UnitsCountMismatch,
    #[msg("An escrow the agent opened can still be settled and disputed: its collateral stays until a dispute window after its deadline")]
    EscrowsStillDisputable,
    #[msg("A metered call's units are above the most its escrow holds the price of")]
    UnitsAboveMaximum,
    #[msg("A settlement that returns part of an escrow needs that escrow's payer token account, in order after the escrows")]
    ReturnAccountMismatch,
}
