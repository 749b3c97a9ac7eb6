//! A LiteSVM chain with agent_market deployed natively, and the operations tests, benchmarks
//! and the local chain server perform on it: transactions, the clock, and test USDC.

use {
    crate::{
        fees,
        market::{pda, MarketKeys},
        native::add_native_program,
    },
    agent_market::{MarketParams, FEE_SHARD_COUNT},
    anchor_lang::{
        solana_program::bpf_loader_upgradeable::UpgradeableLoaderState, AccountDeserialize, AnchorDeserialize,
        Discriminator,
    },
    litesvm::{
        types::{FailedTransactionMetadata, TransactionMetadata, TransactionResult},
        LiteSVM,
    },
    solana_account::Account,
    solana_hash::Hash,
    solana_instruction::Instruction,
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    solana_transaction::Transaction,
    solana_transaction_error::TransactionError,
    spl_associated_token_account_client::{
        address::get_associated_token_address, instruction::create_associated_token_account_idempotent,
    },
    spl_token::solana_program::program_pack::Pack,
};

pub const USDC_DECIMALS: u8 = 6;
/// One USDC in base units.
pub const USDC: u64 = 1_000_000;

pub struct Chain {
    pub svm: LiteSVM,
}

impl Default for Chain {
    fn default() -> Self {
        Self::new()
    }
}

impl Chain {
    /// A chain with signature verification, blockhash checks, fees, the SPL programs, the
    /// precompiles and agent_market.
    pub fn new() -> Self {
        let mut svm = LiteSVM::new();
        add_native_program(&mut svm, agent_market::ID, agent_market::entry);
        Chain { svm }
    }

    /// Signs `instructions` with `fee_payer` and `signers`, sends them as one transaction, and
    /// moves to a new blockhash so that an identical transaction sent next is a new one. The fee
    /// payer pays the priority fee too, as on a cluster (see `fees`).
    pub fn send(
        &mut self,
        instructions: &[Instruction],
        fee_payer: &Keypair,
        signers: &[&Keypair],
    ) -> TransactionResult {
        let transaction = signed_transaction(instructions, fee_payer, signers, self.svm.latest_blockhash());
        let message = &transaction.message;
        let priority_fee_taken = fees::take_priority_fee(&mut self.svm, &message.account_keys, &message.instructions)
            .map_err(|err| FailedTransactionMetadata {
            err,
            meta: TransactionMetadata::default(),
        })?;
        let result = self.svm.send_transaction(transaction);
        // Only a transaction that failed in an instruction pays its fees.
        if let Err(failed) = &result {
            if !matches!(failed.err, TransactionError::InstructionError(..)) {
                fees::give_back(&mut self.svm, fee_payer.pubkey(), priority_fee_taken);
            }
        }
        self.svm.expire_blockhash();
        result
    }

    /// Writes the program's ProgramData account naming `upgrade_authority` (none: immutable), as
    /// deploying the program with the upgradeable loader would. The program itself runs natively,
    /// so the account carries no ELF after its header.
    pub fn set_upgrade_authority(&mut self, upgrade_authority: Option<Pubkey>) {
        let state = UpgradeableLoaderState::ProgramData {
            slot: 0,
            upgrade_authority_address: upgrade_authority,
        };
        let data = bincode::serialize(&state).expect("ProgramData serializes");
        let account = Account {
            lamports: self.svm.minimum_balance_for_rent_exemption(data.len()),
            data,
            owner: solana_sdk_ids::bpf_loader_upgradeable::ID,
            executable: false,
            rent_epoch: 0,
        };
        self.svm
            .set_account(pda::program_data(), account)
            .expect("write ProgramData");
    }

    pub fn funded_keypair(&mut self, lamports: u64) -> Keypair {
        let keypair = Keypair::new();
        self.svm.airdrop(&keypair.pubkey(), lamports).expect("airdrop");
        keypair
    }

    pub fn now(&self) -> i64 {
        self.svm.get_sysvar::<solana_sysvar::clock::Clock>().unix_timestamp
    }

    /// Moves the clock forward by `secs`, and the slot with it at 400 ms a slot.
    pub fn advance_clock(&mut self, secs: i64) {
        let mut clock = self.svm.get_sysvar::<solana_sysvar::clock::Clock>();
        clock.unix_timestamp += secs;
        clock.slot += (secs.max(0) as u64 * 5).div_ceil(2);
        self.svm.set_sysvar(&clock);
    }

    pub fn account(&self, address: &Pubkey) -> Option<Account> {
        self.svm.get_account(address).filter(|account| account.lamports > 0)
    }

    pub fn lamports(&self, address: &Pubkey) -> u64 {
        self.svm.get_balance(address).unwrap_or(0)
    }

    /// Deserializes a program account, checking its discriminator.
    pub fn anchor_account<T: AccountDeserialize>(&self, address: &Pubkey) -> Option<T> {
        let account = self.account(address)?;
        T::try_deserialize(&mut account.data.as_slice()).ok()
    }

    pub fn create_mint(&mut self, payer: &Keypair, mint_authority: &Pubkey) -> Pubkey {
        self.create_mint_at(payer, &Keypair::new(), mint_authority)
    }

    /// Creates a 6-decimal mint at the address of `mint`.
    pub fn create_mint_at(&mut self, payer: &Keypair, mint: &Keypair, mint_authority: &Pubkey) -> Pubkey {
        let space = spl_token::state::Mint::LEN;
        let instructions = [
            solana_system_interface::instruction::create_account(
                &payer.pubkey(),
                &mint.pubkey(),
                self.svm.minimum_balance_for_rent_exemption(space),
                space as u64,
                &spl_token::ID,
            ),
            spl_token::instruction::initialize_mint2(
                &spl_token::ID,
                &mint.pubkey(),
                mint_authority,
                None,
                USDC_DECIMALS,
            )
            .expect("initialize_mint2"),
        ];
        self.send(&instructions, payer, &[mint]).expect("create mint");
        mint.pubkey()
    }

    /// The owner's associated token account for `mint`, created if missing.
    pub fn token_account(&mut self, payer: &Keypair, owner: &Pubkey, mint: &Pubkey) -> Pubkey {
        let instruction = create_associated_token_account_idempotent(&payer.pubkey(), owner, mint, &spl_token::ID);
        self.send(&[instruction], payer, &[]).expect("create token account");
        get_associated_token_address(owner, mint)
    }

    pub fn mint_to(&mut self, mint_authority: &Keypair, mint: &Pubkey, to: &Pubkey, amount: u64) {
        let instruction =
            spl_token::instruction::mint_to(&spl_token::ID, mint, to, &mint_authority.pubkey(), &[], amount)
                .expect("mint_to");
        self.send(&[instruction], mint_authority, &[]).expect("mint test USDC");
    }

    /// Sets the allowance the owner gives the market's delegate PDA over `token_account`.
    pub fn approve_market(
        &mut self,
        owner: &Keypair,
        token_account: &Pubkey,
        mint: &Pubkey,
        amount: u64,
    ) -> TransactionResult {
        let instruction = spl_token::instruction::approve_checked(
            &spl_token::ID,
            token_account,
            mint,
            &pda::delegate(),
            &owner.pubkey(),
            &[],
            amount,
            USDC_DECIMALS,
        )
        .expect("approve_checked");
        self.send(&[instruction], owner, &[])
    }

    pub fn token(&self, address: &Pubkey) -> Option<spl_token::state::Account> {
        let account = self.account(address)?;
        spl_token::state::Account::unpack(&account.data).ok()
    }

    pub fn token_balance(&self, address: &Pubkey) -> u64 {
        self.token(address).map(|account| account.amount).unwrap_or(0)
    }
}

/// The keypairs that run a market.
pub struct MarketKeypairs {
    pub authority: Keypair,
    pub relayer: Keypair,
    pub arbiter: Keypair,
    pub mint_authority: Keypair,
    pub usdc_mint: Keypair,
}

impl MarketKeypairs {
    pub fn random() -> Self {
        MarketKeypairs {
            authority: Keypair::new(),
            relayer: Keypair::new(),
            arbiter: Keypair::new(),
            mint_authority: Keypair::new(),
            usdc_mint: Keypair::new(),
        }
    }
}

/// The keys of a market bootstrapped on a chain.
pub struct MarketSetup {
    pub keys: MarketKeys,
    pub authority: Keypair,
    pub relayer: Keypair,
    pub arbiter: Keypair,
    pub mint_authority: Keypair,
}

impl MarketSetup {
    /// Creates the USDC mint and treasury, initializes the market with `params` (its relayer
    /// and arbiter are replaced by the given keypairs) and creates every fee shard.
    pub fn bootstrap(
        chain: &mut Chain,
        keypairs: MarketKeypairs,
        params: MarketParams,
    ) -> Result<Self, FailedTransactionMetadata> {
        let setup = MarketSetup::mint_only(chain, keypairs);
        setup.initialize(chain, params)?;
        Ok(setup)
    }

    /// What a market needs before it exists: the program deployed with the authority as its
    /// upgrade authority, its keys funded, the USDC mint and the treasury (the authority's
    /// associated USDC account). The market itself is left for `initialize`, or for
    /// `agent-market admin init` as on a cluster the program was just deployed to.
    pub fn mint_only(chain: &mut Chain, keypairs: MarketKeypairs) -> Self {
        chain.set_upgrade_authority(Some(keypairs.authority.pubkey()));
        for keypair in [
            &keypairs.authority,
            &keypairs.relayer,
            &keypairs.arbiter,
            &keypairs.mint_authority,
        ] {
            chain.svm.airdrop(&keypair.pubkey(), 100_000_000_000).expect("airdrop");
        }
        let authority = &keypairs.authority;
        let usdc_mint = chain.create_mint_at(authority, &keypairs.usdc_mint, &keypairs.mint_authority.pubkey());
        chain.token_account(authority, &authority.pubkey(), &usdc_mint);
        MarketSetup::existing(keypairs)
    }

    /// initialize_market with `params` (its relayer and arbiter replaced by this setup's), then
    /// every fee shard.
    pub fn initialize(&self, chain: &mut Chain, params: MarketParams) -> Result<(), FailedTransactionMetadata> {
        let params = MarketParams {
            relayer: self.relayer.pubkey(),
            arbiter: self.arbiter.pubkey(),
            ..params
        };
        chain.send(&[self.keys.initialize_market(params)], &self.authority, &[])?;
        let shards: Vec<Instruction> = (0..FEE_SHARD_COUNT)
            .map(|index| self.keys.create_fee_shard(index))
            .collect();
        chain.send(&shards, &self.authority, &[])?;
        Ok(())
    }

    /// The setup of a market bootstrapped with these keypairs; its treasury is the authority's
    /// associated USDC account.
    pub fn existing(keypairs: MarketKeypairs) -> Self {
        let MarketKeypairs {
            authority,
            relayer,
            arbiter,
            mint_authority,
            usdc_mint,
        } = keypairs;
        let usdc_mint = usdc_mint.pubkey();
        let keys = MarketKeys {
            authority: authority.pubkey(),
            relayer: relayer.pubkey(),
            arbiter: arbiter.pubkey(),
            usdc_mint,
            treasury: get_associated_token_address(&authority.pubkey(), &usdc_mint),
        };
        MarketSetup {
            keys,
            authority,
            relayer,
            arbiter,
            mint_authority,
        }
    }
}

/// The events of type `E` that the program emitted through `emit_cpi!` in a transaction.
pub fn events<E: AnchorDeserialize + Discriminator>(meta: &TransactionMetadata) -> Vec<E> {
    let prefix: Vec<u8> = anchor_lang::event::EVENT_IX_TAG_LE
        .iter()
        .chain(E::DISCRIMINATOR)
        .copied()
        .collect();
    meta.inner_instructions
        .iter()
        .flatten()
        .filter_map(|inner| inner.instruction.data.strip_prefix(prefix.as_slice()))
        .filter_map(|mut data| E::deserialize(&mut data).ok())
        .collect()
}

/// `instructions` in one legacy transaction paid by `fee_payer` and signed by it and `signers`
/// (the fee payer once, even when it is among them).
pub fn signed_transaction(
    instructions: &[Instruction],
    fee_payer: &Keypair,
    signers: &[&Keypair],
    blockhash: Hash,
) -> Transaction {
    let mut all_signers = vec![fee_payer];
    all_signers.extend(
        signers
            .iter()
            .copied()
            .filter(|signer| signer.pubkey() != fee_payer.pubkey()),
    );
    Transaction::new_signed_with_payer(instructions, Some(&fee_payer.pubkey()), &all_signers, blockhash)
}
