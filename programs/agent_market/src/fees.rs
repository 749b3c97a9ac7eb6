use crate::constants::{BPS_DENOMINATOR, FEE_BPS};

/// How a payment divides between the creator and the marketplace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub creator_share_usdc: u64,
    pub fee_usdc: u64,
}

/// `fee = floor(amount * FEE_BPS / 10_000)`, the creator gets the rest, so the two always add
/// up to the amount. Widened to u128 so that no u64 amount can overflow.
pub fn split(amount_usdc: u64) -> Split {
    let fee_usdc = (u128::from(amount_usdc) * u128::from(FEE_BPS) / u128::from(BPS_DENOMINATOR)) as u64;
    Split {
        creator_share_usdc: amount_usdc - fee_usdc,
        fee_usdc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(amount_usdc: u64) {
        let Split {
            creator_share_usdc,
            fee_usdc,
        } = split(amount_usdc);
        assert_eq!(
            creator_share_usdc.checked_add(fee_usdc),
            Some(amount_usdc),
            "amount {amount_usdc}"
        );
        assert_eq!(fee_usdc, amount_usdc / 100, "amount {amount_usdc}");
    }

    #[test]
    fn split_adds_up_and_fee_is_one_percent_rounded_down() {
        for amount_usdc in [0, 1, 99, 100, 101, 199, 200, 1_000_000, u64::MAX - 1, u64::MAX] {
            check(amount_usdc);
        }
        // A deterministic spread over the whole u64 range.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(x);
            check(x % 1_000_000_000);
        }
    }
}
