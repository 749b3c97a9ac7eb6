//! What `getRecentPrioritizationFees` answers: per recent slot, the lowest unit price a
//! processed transaction paid, raised to the lowest paid by those writing given accounts, as a
//! validator's prioritization-fee cache keeps them.

use {
    crate::fees,
    solana_pubkey::Pubkey,
    solana_transaction::versioned::VersionedTransaction,
    std::collections::{HashMap, VecDeque},
};

/// Slots answered, as agave's cache keeps them (`MAX_NUM_RECENT_BLOCKS`).
pub const RECENT_SLOTS: u64 = 150;

/// The lowest unit prices (micro-lamports per compute unit) paid in one slot.
#[derive(Default)]
struct SlotFees {
    lowest_micro_lamports: Option<u64>,
    lowest_by_writable_account: HashMap<Pubkey, u64>,
}

#[derive(Default)]
pub struct PriorityFees {
    /// Slots in which transactions were processed, oldest first.
    slots: VecDeque<(u64, SlotFees)>,
}

impl PriorityFees {
    /// Notes the unit price `transaction` paid in `slot`, which it could write `writable` in.
    pub fn record(&mut self, slot: u64, transaction: &VersionedTransaction, writable: &[Pubkey]) {
        let message = &transaction.message;
        let price = fees::compute_budget(message.static_account_keys(), message.instructions())
            .map(|limits| limits.compute_unit_price)
            .unwrap_or(0);
        while self
            .slots
            .front()
            .is_some_and(|(oldest, _)| oldest.saturating_add(RECENT_SLOTS) <= slot)
        {
            self.slots.pop_front();
        }
        if self.slots.back().is_none_or(|(newest, _)| *newest != slot) {
            self.slots.push_back((slot, SlotFees::default()));
        }
        let (_, fees) = self.slots.back_mut().expect("pushed above");
        fees.lowest_micro_lamports = Some(fees.lowest_micro_lamports.map_or(price, |lowest| lowest.min(price)));
        for account in writable {
            fees.lowest_by_writable_account
                .entry(*account)
                .and_modify(|lowest| *lowest = (*lowest).min(price))
                .or_insert(price);
        }
    }

    /// `(slot, prioritizationFee)` for each of the `RECENT_SLOTS` slots up to `current_slot`,
    /// oldest first: the lowest price paid in it, or the highest of the lowest paid by
    /// transactions writing one of `accounts`; 0 for a slot without transactions.
    pub fn recent(&self, current_slot: u64, accounts: &[Pubkey]) -> Vec<(u64, u64)> {
        let first_slot = current_slot.saturating_add(1).saturating_sub(RECENT_SLOTS);
        let mut recorded = self.slots.iter().peekable();
        (first_slot..=current_slot)
            .map(|slot| {
                while recorded.next_if(|(recorded_slot, _)| *recorded_slot < slot).is_some() {}
                let fee = match recorded.peek() {
                    Some((recorded_slot, fees)) if *recorded_slot == slot => accounts
                        .iter()
                        .filter_map(|account| fees.lowest_by_writable_account.get(account))
                        .fold(fees.lowest_micro_lamports.unwrap_or(0), |fee, lowest| fee.max(*lowest)),
                    _ => 0,
                };
                (slot, fee)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use {
        super::*, solana_compute_budget_interface::ComputeBudgetInstruction, solana_keypair::Keypair,
        solana_message::Message, solana_signer::Signer, solana_transaction::Transaction,
    };

    fn paying(price: u64, payer: &Keypair) -> VersionedTransaction {
        let message = Message::new(
            &[ComputeBudgetInstruction::set_compute_unit_price(price)],
            Some(&payer.pubkey()),
        );
        VersionedTransaction::from(Transaction::new_unsigned(message))
    }

    #[test]
    fn answers_the_lowest_price_per_slot_raised_by_the_accounts_asked_about() {
        let (cheap, dear) = (Keypair::new(), Keypair::new());
        let mut fees = PriorityFees::default();
        fees.record(3, &paying(10, &cheap), &[cheap.pubkey()]);
        fees.record(3, &paying(500, &dear), &[dear.pubkey()]);
        fees.record(5, &paying(7, &cheap), &[cheap.pubkey()]);
        assert_eq!(
            fees.recent(5, &[]),
            vec![(0, 0), (1, 0), (2, 0), (3, 10), (4, 0), (5, 7)]
        );
        assert_eq!(fees.recent(5, &[dear.pubkey()])[3], (3, 500));
        assert_eq!(fees.recent(500, &[]).len(), RECENT_SLOTS as usize);
        assert_eq!(fees.recent(500, &[])[0].0, 351);
    }
}
