//! What the chain keeps for an account a program in the VM wrote: a buffer of the data's own
//! size, not the 10 KiB of spare room the runtime gives a written account to grow in place.

use {
    localnet::{dev, genesis, history::DEFAULT_RETAIN_TRANSACTIONS},
    serde_json::json,
    solana_account::ReadableAccount,
    solana_pubkey::Pubkey,
    std::str::FromStr,
};

#[test]
fn accounts_a_program_wrote_are_kept_without_spare_capacity() {
    let mut state = genesis::start(
        None,
        None,
        400,
        DEFAULT_RETAIN_TRANSACTIONS,
        genesis::GenesisMarket::Initialized,
    )
    .unwrap();
    let owner = Pubkey::new_unique();
    let mut token_account = None;
    // SPL Token runs in the VM: each mint_to writes the token account and the mint.
    for amount_usdc in 1..=3 {
        let minted = dev::dispatch(
            &mut state,
            "localnet_mintUsdc",
            &json!([owner.to_string(), amount_usdc]),
        )
        .expect("a development method")
        .expect("minted");
        token_account = Some(Pubkey::from_str(minted["tokenAccount"].as_str().unwrap()).unwrap());
    }
    for address in [token_account.unwrap(), state.market.keys.usdc_mint] {
        let account = state.ledger.chain.svm.accounts_db().inner.get(&address).unwrap();
        assert_eq!(account.capacity(), account.data().len(), "{address}");
    }
}
