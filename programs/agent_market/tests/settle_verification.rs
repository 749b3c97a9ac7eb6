//! How a lone result's settlement (a batch of one) finds and reads the Ed25519 verification of the creator's signature: every way
//! to present it other than "one signature, right before the settlement, over its own bytes" is refused,
//! with the exact error and no balance moved.
mod common;

use agent_market::error::AgentMarketError;
use anchor_lang::{prelude::Pubkey, solana_program::sysvar::instructions as instructions_sysvar};
use common::{scene::*, *};
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_signer::Signer;

const ED25519_PROGRAM: Pubkey = Pubkey::from_str_const("Ed25519SigVerify111111111111111111111111111");
const SYSVAR_PROGRAM: Pubkey = Pubkey::from_str_const("Sysvar1111111111111111111111111111111111111");
const THIS_INSTRUCTION: u16 = u16::MAX;

fn digest_of(s: &Scene) -> [u8; 32] {
    s.t.digest_of(&s.escrow, 0)
}

/// One signature entry of an Ed25519 precompile instruction: the key, signature and message
/// it verifies, all carried in the instruction's own data.
struct Entry {
    public_key: [u8; 32],
    signature: [u8; 64],
    message: Vec<u8>,
}

fn entry(signer: &Keypair, message: &[u8]) -> Entry {
    Entry {
        public_key: signer.pubkey().to_bytes(),
        signature: signer.sign_message(message).into(),
        message: message.to_vec(),
    }
}

/// The precompile's layout: `[count, 0]`, one 14-byte offsets block per entry, then `prefix`
/// (bytes no offset points at), then each entry's key, signature and message.
fn ed25519_instruction(entries: &[Entry], prefix: &[u8]) -> Instruction {
    let header_len = 2 + 14 * entries.len();
    let mut data = vec![entries.len() as u8, 0];
    let mut payload = prefix.to_vec();
    for entry in entries {
        let public_key_offset = (header_len + payload.len()) as u16;
        payload.extend_from_slice(&entry.public_key);
        let signature_offset = (header_len + payload.len()) as u16;
        payload.extend_from_slice(&entry.signature);
        let message_offset = (header_len + payload.len()) as u16;
        payload.extend_from_slice(&entry.message);
        for field in [
            signature_offset,
            THIS_INSTRUCTION,
            public_key_offset,
            THIS_INSTRUCTION,
            message_offset,
            entry.message.len() as u16,
            THIS_INSTRUCTION,
        ] {
            data.extend_from_slice(&field.to_le_bytes());
        }
    }
    data.extend_from_slice(&payload);
    Instruction {
        program_id: ED25519_PROGRAM,
        accounts: vec![],
        data,
    }
}

/// `[verification, settle]` with this verification instead of the agent's own.
fn settle_after(s: &Scene, verification: Instruction) -> Vec<Instruction> {
    let mut instructions = s.settle_ixs_signed_by(&s.agent.signing);
    instructions[0] = verification;
    instructions
}

#[test]
fn the_layout_built_here_is_the_one_settle_accepts() {
    let mut s = Scene::new();
    let digest = digest_of(&s);
    let instructions = settle_after(&s, ed25519_instruction(&[entry(&s.agent.signing, &digest)], &[]));
    ok(s.t.send_as_relayer(&instructions));
}

#[test]
fn a_fake_instructions_sysvar_is_refused() {
    let mut s = Scene::new();
    // An account posing as the sysvar, owned by the sysvar program, filled with what the real one
    // would hold if a verification preceded settle; the transaction itself carries none.
    let fake = Pubkey::new_unique();
    let mut account = s.t.chain.account(&s.agent.address).unwrap();
    account.owner = SYSVAR_PROGRAM;
    account.data = vec![0xAB; 512];
    s.t.chain.svm.set_account(fake, account).unwrap();
    let result = s.unchanged(|s| {
        let instructions = s.settle_ixs_signed_by(&s.agent.signing);
        let mut settle = instructions[1].clone();
        replace_account(&mut settle, instructions_sysvar::ID, fake);
        s.t.send_as_relayer(&[settle])
    });
    assert_program_error(&result, AgentMarketError::InvalidInstructionsSysvar);
}

#[test]
fn an_ed25519_instruction_with_no_signature_is_refused() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        // Two bytes, a count of zero: the precompile accepts it, verifying nothing.
        let instructions = settle_after(s, ed25519_instruction(&[], &[]));
        assert_eq!(instructions[0].data, vec![0, 0]);
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::MalformedEd25519Instruction);
}

#[test]
fn an_ed25519_instruction_with_two_signatures_is_refused() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let digest = digest_of(s);
        // The first entry is the agent's valid signature of this very digest; a second one rides
        // along, so the instruction is neither one signature for the batch of one nor one per escrow.
        let other = Keypair::new();
        let entries = [entry(&s.agent.signing, &digest), entry(&other, b"anything else")];
        let instructions = settle_after(s, ed25519_instruction(&entries, &[]));
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::BatchSignatureCountMismatch);
}

#[test]
fn an_ed25519_instruction_placed_after_settle_is_refused() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let mut instructions = s.settle_ixs_signed_by(&s.agent.signing);
        instructions.swap(0, 1);
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::MissingEd25519Instruction);
}

#[test]
fn the_key_is_read_where_the_offsets_point_not_where_it_usually_sits() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let digest = digest_of(s);
        // Where a verification usually carries its key, signature and message (offsets 16, 48
        // and 112), the agent's key, a blank signature and the digest; but the offsets point past
        // them, at an impostor's valid signature of the digest, which is what the precompile checks.
        let mut decoy = s.agent.signing.pubkey().to_bytes().to_vec();
        decoy.extend_from_slice(&[0; 64]);
        decoy.extend_from_slice(&digest);
        let impostor = Keypair::new();
        let verification = ed25519_instruction(&[entry(&impostor, &digest)], &decoy);
        assert_eq!(&verification.data[16..48], &s.agent.signing.pubkey().to_bytes());
        assert_eq!(&verification.data[112..144], &digest);
        s.t.send_as_relayer(&settle_after(s, verification))
    });
    assert_program_error(&result, AgentMarketError::SignerKeyMismatch);
}

#[test]
fn a_signed_message_longer_than_the_digest_is_refused() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        // The agent's valid signature over the digest followed by one more byte: the first 32
        // bytes match, but the signature is over a different message.
        let mut message = digest_of(s).to_vec();
        message.push(0);
        let verification = ed25519_instruction(&[entry(&s.agent.signing, &message)], &[]);
        s.t.send_as_relayer(&settle_after(s, verification))
    });
    assert_program_error(&result, AgentMarketError::MalformedEd25519Instruction);
}
