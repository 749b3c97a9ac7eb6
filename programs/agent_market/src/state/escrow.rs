use anchor_lang::prelude::*;

use crate::error::AgentMarketError;

/// USDC held for one execution until it is settled, refunded or reclaimed.
#[account]
#[derive(InitSpace)]
pub struct Escrow {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    /// The agent's count of escrows opened before this one: never the same twice for an agent,
    /// and part of the digest the creator signs.
    pub nonce: u64,
    /// Owner of `payer_token_account`: the wallet that pays.
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    /// The API key that started the execution, for usage attribution.
    pub api_key_id: [u8; 16],
    /// Held for the call: a fixed-price call's price, or the most a metered call may cost.
    pub amount_usdc: u64,
    /// 0 for a fixed-price call, which settles its whole amount; otherwise what each unit the
    /// creator signs costs, the rest of the amount going back to the payer at settlement.
    pub price_per_unit_usdc: u64,
    /// The most units a metered call may be settled for (0 for a fixed-price call).
    pub max_units: u64,
    /// SHA-256 of the canonical JSON of the task and parameters.
    pub request_hash: [u8; 32],
    pub opened_at: i64,
    /// After this the payer may reclaim the escrow and it can no longer be settled.
    pub deadline: i64,
    /// Paid the escrow's rent and gets it back when the escrow closes.
    pub rent_payer: Pubkey,
    /// The call used one of a hybrid subscription's included calls.
    pub used_included_call: bool,
    pub bump: u8,
}

/// What settling an escrow for `units` moves: `charged_usdc` split between the creator and the
/// marketplace, `returned_usdc` back to the payer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Charge {
    pub charged_usdc: u64,
    pub returned_usdc: u64,
}

impl Escrow {
    /// A fixed-price call is charged its whole amount whatever units it reports; a metered one
    /// `units × price_per_unit_usdc`, with units above its maximum refused, so that no charge
    /// exceeds what the escrow holds.
    pub fn charge(&self, units: u64) -> Result<Charge> {
        if self.price_per_unit_usdc == 0 {
            return Ok(Charge {
                charged_usdc: self.amount_usdc,
                returned_usdc: 0,
            });
        }
        require_gte!(self.max_units, units, AgentMarketError::UnitsAboveMaximum);
        let charged_usdc = units
            .checked_mul(self.price_per_unit_usdc)
            .ok_or(AgentMarketError::MathOverflow)?;
        let returned_usdc = self
            .amount_usdc
            .checked_sub(charged_usdc)
            .ok_or(AgentMarketError::MathOverflow)?;
        Ok(Charge {
            charged_usdc,
            returned_usdc,
        })
    }
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundReason {
    Timeout,
    CreatorError,
    InvalidSignature,
    OutputInvalid,
    RelayerError,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escrow(amount_usdc: u64, price_per_unit_usdc: u64, max_units: u64) -> Escrow {
        Escrow {
            execution_id: [0; 16],
            agent: Pubkey::default(),
            nonce: 0,
            payer: Pubkey::default(),
            payer_token_account: Pubkey::default(),
            api_key_id: [0; 16],
            amount_usdc,
            price_per_unit_usdc,
            max_units,
            request_hash: [0; 32],
            opened_at: 0,
            deadline: 0,
            rent_payer: Pubkey::default(),
            used_included_call: false,
            bump: 0,
        }
    }

    #[test]
    fn a_fixed_price_call_is_charged_its_amount_whatever_it_reports() {
        for units in [0, 7, u64::MAX] {
            assert_eq!(
                escrow(250_000, 0, 0).charge(units).unwrap(),
                Charge {
                    charged_usdc: 250_000,
                    returned_usdc: 0
                }
            );
        }
    }

    #[test]
    fn a_metered_call_is_charged_its_units_and_gets_the_rest_back() {
        let held = escrow(5_000, 1_000, 5);
        for (units, charged_usdc) in [(0, 0), (1, 1_000), (3, 3_000), (5, 5_000)] {
            assert_eq!(
                held.charge(units).unwrap(),
                Charge {
                    charged_usdc,
                    returned_usdc: 5_000 - charged_usdc
                }
            );
        }
        assert_eq!(
            held.charge(6).unwrap_err(),
            AgentMarketError::UnitsAboveMaximum.into()
        );
        assert_eq!(
            held.charge(u64::MAX).unwrap_err(),
            AgentMarketError::UnitsAboveMaximum.into()
        );
    }
}
