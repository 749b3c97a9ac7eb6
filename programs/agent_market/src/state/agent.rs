use anchor_lang::prelude::*;

use crate::{
    constants::{MAX_ENDPOINT_LEN, MAX_SUBSCRIPTION_PERIOD_SECS},
    error::AgentMarketError,
};

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq, InitSpace)]
pub enum Pricing {
    /// Every call pays `price_usdc`.
    PayPerUse { price_usdc: u64 },
    /// A period's subscription covers every call in it; calls without one are refused.
    Subscription { period_price_usdc: u64, period_secs: u32 },
    /// A period's subscription covers `included_calls`; other calls pay `overage_price_usdc`.
    Hybrid {
        period_price_usdc: u64,
        period_secs: u32,
        included_calls: u32,
        overage_price_usdc: u64,
    },
    /// A call pays `price_per_unit_usdc` for each unit its creator signs it used, up to
    /// `max_units_per_call`: its escrow holds the most it may cost, and settlement returns the rest.
    Metered {
        price_per_unit_usdc: u64,
        max_units_per_call: u64,
    },
}

/// What one call holds in escrow and how its settlement charges it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallPrice {
    /// What the escrow holds: a fixed-price call's price, or the most a metered call may cost.
    pub amount_usdc: u64,
    /// The call used one of a hybrid subscription's included calls.
    pub used_included_call: bool,
    /// 0 for a fixed-price call, which settles its whole amount; otherwise what each unit costs.
    pub price_per_unit_usdc: u64,
    /// The most units a metered call may be charged for: `amount_usdc / price_per_unit_usdc`.
    pub max_units: u64,
}

impl CallPrice {
    pub fn fixed(amount_usdc: u64, used_included_call: bool) -> Self {
        CallPrice {
            amount_usdc,
            used_included_call,
            price_per_unit_usdc: 0,
            max_units: 0,
        }
    }

    /// A metered call the caller accepts paying up to `max_amount_usdc` for: it may use as many
    /// whole units as the smaller of the agent's limit and the caller's maximum buys, and holds
    /// exactly their price. A maximum below one unit's price buys no call.
    pub fn metered(price_per_unit_usdc: u64, max_units_per_call: u64, max_amount_usdc: u64) -> Result<Self> {
        let max_units = max_units_per_call.min(max_amount_usdc / price_per_unit_usdc);
        require_gte!(max_units, 1, AgentMarketError::PriceAboveMaximum);
        Ok(CallPrice {
            amount_usdc: max_units
                .checked_mul(price_per_unit_usdc)
                .ok_or(AgentMarketError::MathOverflow)?,
            used_included_call: false,
            price_per_unit_usdc,
            max_units,
        })
    }
}

impl Pricing {
    pub fn is_valid(&self) -> bool {
        match *self {
            Pricing::PayPerUse { price_usdc } => price_usdc > 0,
            Pricing::Subscription {
                period_price_usdc,
                period_secs,
            } => period_price_usdc > 0 && period_secs > 0,
            Pricing::Hybrid {
                period_price_usdc,
                period_secs,
                included_calls,
                overage_price_usdc,
            } => period_price_usdc > 0 && period_secs > 0 && included_calls > 0 && overage_price_usdc > 0,
            // The most a call can cost must be a u64 amount.
            Pricing::Metered {
                price_per_unit_usdc,
                max_units_per_call,
            } => {
                price_per_unit_usdc > 0
                    && max_units_per_call > 0
                    && price_per_unit_usdc.checked_mul(max_units_per_call).is_some()
            }
        }
    }

    /// A period longer than a year would keep a retired agent's collateral locked for as long, and
    /// give that many covered calls for one payment.
    pub fn require_period_at_most_max(&self) -> Result<()> {
        match *self {
            Pricing::PayPerUse { .. } | Pricing::Metered { .. } => Ok(()),
            Pricing::Subscription { period_secs, .. } | Pricing::Hybrid { period_secs, .. } => {
                require_gte!(
                    MAX_SUBSCRIPTION_PERIOD_SECS,
                    period_secs,
                    AgentMarketError::SubscriptionPeriodTooLong
                );
                Ok(())
            }
        }
    }

    /// Every call must pay at least `min_price_per_call_usdc`: a pay-per-use or overage call
    /// directly, a call included in a hybrid plan through its share of the period price. An
    /// unlimited subscription has no call count to divide by, so it counts as one call: its period
    /// price must cover at least one execution. A metered call's charge depends on the units it
    /// used, so the minimum bounds the most one call may cost: a call of fewer units is charged
    /// less (docs/program.md, "Metered pricing").
    pub fn require_min_price(&self, min_price_per_call_usdc: u64) -> Result<()> {
        match *self {
            Pricing::PayPerUse { price_usdc } => {
                require_gte!(price_usdc, min_price_per_call_usdc, AgentMarketError::PriceBelowMinimum);
            }
            Pricing::Subscription { period_price_usdc, .. } => {
                require_gte!(
                    period_price_usdc,
                    min_price_per_call_usdc,
                    AgentMarketError::PeriodPriceBelowMinimum
                );
            }
            Pricing::Hybrid {
                period_price_usdc,
                included_calls,
                overage_price_usdc,
                ..
            } => {
                // period price / included calls >= minimum, without the division's rounding; a u64
                // times a u32 always fits in a u128.
                require_gte!(
                    u128::from(period_price_usdc),
                    u128::from(min_price_per_call_usdc) * u128::from(included_calls),
                    AgentMarketError::PeriodPriceBelowMinimum
                );
                require_gte!(
                    overage_price_usdc,
                    min_price_per_call_usdc,
                    AgentMarketError::OveragePriceBelowMinimum
                );
            }
            Pricing::Metered {
                price_per_unit_usdc,
                max_units_per_call,
            } => {
                require_gte!(
                    u128::from(price_per_unit_usdc) * u128::from(max_units_per_call),
                    u128::from(min_price_per_call_usdc),
                    AgentMarketError::PriceBelowMinimum
                );
            }
        }
        Ok(())
    }
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq, InitSpace)]
pub enum AgentStatus {
    Active,
    Retired,
}

#[account]
#[derive(InitSpace)]
pub struct Agent {
    pub creator: Pubkey,
    pub agent_id: [u8; 16],
    /// Ed25519 public key that signs results.
    pub signing_key: [u8; 32],
    /// USDC account that receives the creator's share.
    pub payout_account: Pubkey,
    #[max_len(MAX_ENDPOINT_LEN as usize)]
    pub endpoint: String,
    /// SHA-256 of the off-chain listing (name, description, tags, schemas).
    pub listing_hash: [u8; 32],
    pub pricing: Pricing,
    pub max_execution_secs: u32,
    pub collateral_usdc: u64,
    pub status: AgentStatus,
    pub registered_at: i64,
    pub retired_at: i64,
    pub open_disputes: u32,
    pub bump: u8,
    pub collateral_vault_bump: u8,
    pub escrow_vault_bump: u8,
    /// When the last subscription sold for the agent expires: its covered calls are honoured
    /// until then even after retirement, so collateral stays locked until then plus the cooldown.
    pub subscriptions_expire_at: i64,
    /// Escrows the agent has ever opened: the next escrow's nonce. A creator's signature covers
    /// its escrow's nonce, so it can never settle another escrow, even one of the same
    /// execution id (docs/program.md, "One signature, one escrow").
    pub escrows_opened: u64,
    /// The latest deadline of any escrow the agent opened: settled by then at the latest, it can
    /// be disputed until a dispute window later, whatever grace the market sets afterwards.
    pub last_escrow_deadline: i64,
}

impl Agent {
    /// Records an escrow opening with `deadline` and returns its nonce; the next open gets the
    /// following one.
    pub fn record_escrow(&mut self, deadline: i64) -> Result<u64> {
        let nonce = self.escrows_opened;
        self.escrows_opened = nonce.checked_add(1).ok_or(AgentMarketError::MathOverflow)?;
        self.last_escrow_deadline = self.last_escrow_deadline.max(deadline);
        Ok(nonce)
    }
}

/// The listing terms a creator sets at registration and may change with `update_agent`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct AgentTerms {
    pub signing_key: [u8; 32],
    pub endpoint: String,
    pub listing_hash: [u8; 32],
    pub pricing: Pricing,
    pub max_execution_secs: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metered_call_holds_the_whole_units_the_smaller_limit_buys() {
        // The agent's limit binds: 10 units of 1,000 held though the caller accepts more.
        let by_agent = CallPrice::metered(1_000, 10, 50_000).unwrap();
        assert_eq!((by_agent.amount_usdc, by_agent.max_units), (10_000, 10));
        // The caller's maximum binds, rounded down to whole units.
        let by_caller = CallPrice::metered(1_000, 10, 3_999).unwrap();
        assert_eq!((by_caller.amount_usdc, by_caller.max_units), (3_000, 3));
        assert_eq!(by_caller.price_per_unit_usdc, 1_000);
        assert_eq!(
            CallPrice::metered(1_000, 10, 999).unwrap_err(),
            AgentMarketError::PriceAboveMaximum.into()
        );
    }

    #[test]
    fn metered_pricing_is_valid_only_when_its_most_expensive_call_is_a_u64() {
        let metered = |price_per_unit_usdc, max_units_per_call| Pricing::Metered {
            price_per_unit_usdc,
            max_units_per_call,
        };
        assert!(metered(1, u64::MAX).is_valid());
        assert!(!metered(2, u64::MAX).is_valid());
        assert!(!metered(0, 10).is_valid());
        assert!(!metered(10, 0).is_valid());
        assert!(metered(100, 10).require_min_price(1_000).is_ok());
        assert_eq!(
            metered(100, 9).require_min_price(1_000).unwrap_err(),
            AgentMarketError::PriceBelowMinimum.into()
        );
    }
}
