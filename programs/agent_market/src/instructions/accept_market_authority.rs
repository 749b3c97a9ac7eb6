use anchor_lang::prelude::*;

use crate::{constants::MARKET_SEED, error::AgentMarketError, events::MarketAuthorityAccepted, state::Market};

/// The second step of an authority handover: the key `update_market` proposed signs, and becomes
/// the authority.
#[event_cpi]
#[derive(Accounts)]
pub struct AcceptMarketAuthority<'info> {
    pub new_authority: Signer<'info>,
    #[account(
        mut,
        seeds = [MARKET_SEED],
        bump = market.bump,
        constraint = market.pending_authority == new_authority.key() @ AgentMarketError::NotProposedAuthority,
    )]
    pub market: Account<'info, Market>,
}

pub fn handle_accept_market_authority(ctx: Context<AcceptMarketAuthority>) -> Result<()> {
    let market = &mut ctx.accounts.market;
    let previous_authority = market.authority;
    market.authority = ctx.accounts.new_authority.key();
    market.pending_authority = Pubkey::default();
    emit_cpi!(MarketAuthorityAccepted {
        market: market.key(),
        previous_authority,
        authority: market.authority,
    });
    Ok(())
}
