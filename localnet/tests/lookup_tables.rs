//! v0 transactions that load accounts from address lookup tables: localnet resolves what they
//! loaded when they run and answers for those accounts as for the static ones (balances, an
//! address's history, `getTransaction`'s `loadedAddresses`), also after a restart.

use {
    localnet::{genesis, ledger::Ledger, node::NodeState, rpc},
    serde_json::{json, Value},
    solana_address_lookup_table_interface::{
        instruction::{create_lookup_table, extend_lookup_table},
        state::AddressLookupTable,
    },
    solana_message::{v0, AddressLookupTableAccount, VersionedMessage},
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_signer::Signer,
    solana_transaction::versioned::VersionedTransaction,
    std::{fs, path::PathBuf},
};

const SLOT_MS: u64 = 400;

/// A ledger directory, removed when the test ends.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn start(dir: &Dir) -> NodeState {
    genesis::start(None, Some(&dir.0), SLOT_MS, 0, genesis::GenesisMarket::Initialized).unwrap()
}

fn call(ledger: &mut Ledger, method: &str, params: Value) -> Value {
    rpc::dispatch(ledger, method, &params).unwrap()
}

/// A table holding `addresses`, created and extended by the faucet, usable from the next slot.
fn table_of(state: &mut NodeState, addresses: Vec<Pubkey>) -> AddressLookupTableAccount {
    let faucet = state.faucet.pubkey();
    // The table's recent slot must be one the SlotHashes sysvar knows: an ended one.
    state.ledger.advance_slot();
    let recent_slot = state.ledger.slot() - 1;
    let (create, key) = create_lookup_table(faucet, faucet, recent_slot);
    let extend = extend_lookup_table(key, faucet, Some(faucet), addresses.clone());
    state
        .ledger
        .send_instructions(&[create, extend], &state.faucet, &[])
        .expect("the table is created and extended");
    // Addresses added in a slot are loaded from the next one on.
    state.ledger.advance_slot();
    AddressLookupTableAccount { key, addresses }
}

/// A v0 transfer from the faucet to `to`, which the transaction loads from `table`.
fn transfer_through(state: &mut NodeState, table: &AddressLookupTableAccount, to: &Pubkey, lamports: u64) -> Signature {
    let faucet = &state.faucet;
    let instruction = solana_system_interface::instruction::transfer(&faucet.pubkey(), to, lamports);
    let message = v0::Message::try_compile(
        &faucet.pubkey(),
        &[instruction],
        std::slice::from_ref(table),
        state.ledger.latest_blockhash().0,
    )
    .unwrap();
    assert_eq!(
        message.address_table_lookups.len(),
        1,
        "the recipient is loaded from the table"
    );
    let transaction = VersionedTransaction::try_new(VersionedMessage::V0(message), &[faucet]).unwrap();
    state.ledger.send(transaction, true).expect("the v0 transfer runs")
}

#[test]
fn accounts_loaded_from_a_table_are_answered_for_like_static_ones() {
    let dir = Dir(std::env::temp_dir().join(format!("localnet-lookup-test-{}", Pubkey::new_unique())));
    let mut state = start(&dir);
    let recipient = Pubkey::new_unique();
    let table = table_of(&mut state, vec![Pubkey::new_unique(), recipient]);
    let on_chain = state.ledger.account(&table.key).expect("the table exists");
    assert_eq!(
        AddressLookupTable::deserialize(&on_chain.data)
            .unwrap()
            .addresses
            .as_ref(),
        table.addresses.as_slice()
    );

    let signature = transfer_through(&mut state, &table, &recipient, 2_000_000);
    let record = state.ledger.transaction(&signature).unwrap().expect("recorded");
    assert_eq!(record.loaded_addresses.writable, vec![recipient]);
    assert!(record.loaded_addresses.readonly.is_empty());
    let keys = record.account_keys();
    let at = keys
        .iter()
        .position(|key| *key == recipient)
        .expect("the recipient among the keys");
    assert_eq!(
        record.pre_balances.len(),
        keys.len(),
        "a balance for every key, loaded ones included"
    );
    assert_eq!((record.pre_balances[at], record.post_balances[at]), (0, 2_000_000));

    state.ledger.advance_slot();
    let found = call(
        &mut state.ledger,
        "getTransaction",
        json!([signature.to_string(), { "commitment": "confirmed", "maxSupportedTransactionVersion": 0 }]),
    );
    assert_eq!(found["version"], json!(0));
    assert_eq!(
        found["meta"]["loadedAddresses"]["writable"],
        json!([recipient.to_string()])
    );
    assert_eq!(found["meta"]["loadedAddresses"]["readonly"], json!([]));
    assert_eq!(found["meta"]["postBalances"][at], json!(2_000_000));
    let history = call(
        &mut state.ledger,
        "getSignaturesForAddress",
        json!([recipient.to_string(), { "commitment": "confirmed" }]),
    );
    assert_eq!(
        history[0]["signature"],
        json!(signature.to_string()),
        "a loaded account's history has it"
    );

    state.save();
    drop(state);
    let restarted = start(&dir);
    let read_back = restarted.ledger.transaction(&signature).unwrap().expect("kept");
    assert_eq!(
        read_back.loaded_addresses.writable,
        vec![recipient],
        "the loaded addresses survive a restart"
    );
}

#[test]
fn a_table_names_a_recent_slot_the_slot_hashes_know() {
    let dir = Dir(std::env::temp_dir().join(format!("localnet-lookup-test-{}", Pubkey::new_unique())));
    let mut state = start(&dir);
    for _ in 0..3 {
        state.ledger.advance_slot();
    }
    let faucet = state.faucet.pubkey();
    // The current slot has not ended: no hash of it yet, so no table can name it.
    let (create, _) = create_lookup_table(faucet, faucet, state.ledger.slot());
    assert!(state.ledger.send_instructions(&[create], &state.faucet, &[]).is_err());
    let (create, key) = create_lookup_table(faucet, faucet, state.ledger.slot() - 2);
    state
        .ledger
        .send_instructions(&[create], &state.faucet, &[])
        .expect("an ended slot");
    assert!(state.ledger.account(&key).is_some());
}
