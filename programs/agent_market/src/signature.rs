//! The digests an agent's signing key signs (a result, and the proof that its registrant holds
//! it), and the check that the transaction's Ed25519 precompile instruction verified one of them
//! with that key.

use anchor_lang::prelude::*;
use anchor_lang::solana_program::sysvar::instructions::{load_current_index_checked, load_instruction_at_checked};
use anchor_lang::solana_program::{ed25519_program, hash::hashv};

use crate::{
    constants::{BATCH_DIGEST_DOMAIN, RESULT_DIGEST_DOMAIN, SIGNING_KEY_PROOF_DOMAIN},
    error::AgentMarketError,
    state::Escrow,
};

/// What a result signature is bound to: one escrow, as the program recorded it at open, and the
/// result and units its creator answered.
pub struct ResultBinding<'a> {
    pub escrow: &'a Escrow,
    pub result_hash: &'a [u8; 32],
    pub units: u64,
}

/// `SHA-256(domain ‖ execution_id ‖ agent ‖ nonce ‖ payer ‖ payer_token_account ‖ amount_usdc ‖
/// request_hash ‖ result_hash ‖ units)`, integers little-endian: execute protocol version 2
/// (docs/execute-protocol.md). The escrow's nonce never repeats for an agent, so a signature
/// settles the one escrow it was given for and no other, whoever opens one with the same id.
pub fn result_digest(binding: &ResultBinding) -> [u8; 32] {
    let escrow = binding.escrow;
    hashv(&[
        RESULT_DIGEST_DOMAIN,
        &escrow.execution_id,
        escrow.agent.as_ref(),
        &escrow.nonce.to_le_bytes(),
        escrow.payer.as_ref(),
        escrow.payer_token_account.as_ref(),
        &escrow.amount_usdc.to_le_bytes(),
        &escrow.request_hash,
        binding.result_hash,
        &binding.units.to_le_bytes(),
    ])
    .to_bytes()
}

/// `SHA-256(domain ‖ agent ‖ count ‖ digest_1 ‖ … ‖ digest_count)`, count a little-endian u32:
/// what an agent's signing key signs once for a `settle_batch`, over the result digests of its
/// executions in the batch's order (docs/program.md, "Batched settlement").
pub fn batch_digest(agent: &Pubkey, result_digests: &[[u8; 32]]) -> [u8; 32] {
    let count = (result_digests.len() as u32).to_le_bytes();
    let mut parts: Vec<&[u8]> = Vec::with_capacity(3 + result_digests.len());
    parts.extend([BATCH_DIGEST_DOMAIN, agent.as_ref(), &count]);
    parts.extend(result_digests.iter().map(|digest| digest.as_slice()));
    hashv(&parts).to_bytes()
}

/// `SHA-256(domain ‖ agent ‖ creator)`: what a signing key signs so that `creator` may register it
/// as the key of `agent` (docs/program.md, "Signing-key proof").
pub fn signing_key_proof_digest(agent: &Pubkey, creator: &Pubkey) -> [u8; 32] {
    hashv(&[SIGNING_KEY_PROOF_DOMAIN, agent.as_ref(), creator.as_ref()]).to_bytes()
}

/// The errors a failed verification reports, so that each signed message has its own.
pub struct VerificationErrors {
    pub missing: AgentMarketError,
    pub key_mismatch: AgentMarketError,
    pub digest_mismatch: AgentMarketError,
}

pub const SIGNING_KEY_PROOF: VerificationErrors = VerificationErrors {
    missing: AgentMarketError::MissingSigningKeyProof,
    key_mismatch: AgentMarketError::SigningKeyProofKeyMismatch,
    digest_mismatch: AgentMarketError::SigningKeyProofDigestMismatch,
};

/// Requires the instruction just before the current one (read from the instructions sysvar) to
/// be an Ed25519 precompile instruction that verified `signing_key` over `digest`.
pub fn require_preceding_ed25519(
    instructions: &AccountInfo,
    signing_key: &[u8; 32],
    digest: &[u8; 32],
    errors: &VerificationErrors,
) -> Result<()> {
    let current_index = load_current_index_checked(instructions)?;
    require_gt!(current_index, 0, errors.missing);
    let verification = load_instruction_at_checked(usize::from(current_index - 1), instructions)?;
    require_ed25519_verified(
        &verification.program_id,
        &verification.data,
        signing_key,
        digest,
        errors,
    )
}

const OFFSETS_START: usize = 2;
const OFFSETS_LEN: usize = 14;
const PUBKEY_LEN: usize = 32;
/// Offsets that point into the precompile instruction's own data.
const THIS_INSTRUCTION: u16 = u16::MAX;

fn read_u16(data: &[u8], at: usize) -> Result<u16> {
    data.get(at..at + 2)
        .map(|bytes| u16::from_le_bytes([bytes[0], bytes[1]]))
        .ok_or_else(|| error!(AgentMarketError::MalformedEd25519Instruction))
}

fn slice(data: &[u8], offset: u16, len: usize) -> Result<&[u8]> {
    let start = usize::from(offset);
    data.get(start..start + len)
        .ok_or_else(|| error!(AgentMarketError::MalformedEd25519Instruction))
}

/// Requires `instruction` to be an Ed25519 precompile instruction that verified exactly one
/// signature by `signing_key` over `digest`. The precompile has already checked the signature
/// itself (the transaction fails otherwise); this binds it to the key and message we expect.
pub fn require_ed25519_verified(
    program_id: &Pubkey,
    data: &[u8],
    signing_key: &[u8; 32],
    digest: &[u8; 32],
    errors: &VerificationErrors,
) -> Result<()> {
    require_keys_eq!(*program_id, ed25519_program::ID, errors.missing);
    require!(
        data.len() >= OFFSETS_START + OFFSETS_LEN && data[0] == 1,
        AgentMarketError::MalformedEd25519Instruction
    );
    let (public_key, message) = verified_entry(data, 0)?;
    require!(public_key == signing_key, errors.key_mismatch);
    require!(message == digest, errors.digest_mismatch);
    Ok(())
}

/// The key and 32-byte message of signature entry `entry` of an Ed25519 precompile instruction,
/// which must point into the instruction's own data: offsets into another instruction would let
/// the bytes we read differ from the ones the precompile checked.
fn verified_entry(data: &[u8], entry: usize) -> Result<(&[u8], &[u8])> {
    let offsets = OFFSETS_START + OFFSETS_LEN * entry;
    let signature_instruction = read_u16(data, offsets + 2)?;
    let public_key_offset = read_u16(data, offsets + 4)?;
    let public_key_instruction = read_u16(data, offsets + 6)?;
    let message_offset = read_u16(data, offsets + 8)?;
    let message_len = read_u16(data, offsets + 10)?;
    let message_instruction = read_u16(data, offsets + 12)?;
    require!(
        signature_instruction == THIS_INSTRUCTION
            && public_key_instruction == THIS_INSTRUCTION
            && message_instruction == THIS_INSTRUCTION
            && usize::from(message_len) == 32,
        AgentMarketError::MalformedEd25519Instruction
    );
    Ok((
        slice(data, public_key_offset, PUBKEY_LEN)?,
        slice(data, message_offset, 32)?,
    ))
}

/// Requires the instruction just before the current one to be an Ed25519 precompile
/// instruction that verified `signing_key` over either the batch digest of `result_digests`
/// (one signature: what the creator kit signs) or each result digest in order (one signature
/// per execution: the fallback for a signer that signs calls one by one).
pub fn require_preceding_batch_ed25519(
    instructions: &AccountInfo,
    signing_key: &[u8; 32],
    agent: &Pubkey,
    result_digests: &[[u8; 32]],
) -> Result<()> {
    let current_index = load_current_index_checked(instructions)?;
    require_gt!(current_index, 0, AgentMarketError::MissingEd25519Instruction);
    let verification = load_instruction_at_checked(usize::from(current_index - 1), instructions)?;
    require_keys_eq!(
        verification.program_id,
        ed25519_program::ID,
        AgentMarketError::MissingEd25519Instruction
    );
    let data = &verification.data;
    let count = usize::from(*data.first().ok_or(AgentMarketError::MalformedEd25519Instruction)?);
    require!(count > 0, AgentMarketError::MalformedEd25519Instruction);
    if count == 1 {
        let (public_key, message) = verified_entry(data, 0)?;
        require!(public_key == signing_key, AgentMarketError::SignerKeyMismatch);
        // A batch of one may carry either form: its one result digest or the batch digest.
        let single_result = result_digests.len() == 1 && message == result_digests[0];
        require!(
            single_result || message == batch_digest(agent, result_digests),
            AgentMarketError::DigestMismatch
        );
        return Ok(());
    }
    require_eq!(
        count,
        result_digests.len(),
        AgentMarketError::BatchSignatureCountMismatch
    );
    for (entry, digest) in result_digests.iter().enumerate() {
        let (public_key, message) = verified_entry(data, entry)?;
        require!(public_key == signing_key, AgentMarketError::SignerKeyMismatch);
        require!(message == digest, AgentMarketError::DigestMismatch);
    }
    Ok(())
}
