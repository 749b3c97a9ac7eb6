//! Base58 (Bitcoin's alphabet), as JSON-RPC answers carry keys, signatures and instruction data.
//!
//! The usual encoder divides the whole number by 58 once per input byte, one output digit at a
//! time: quadratic in the length with a division per step, which for an event's 250 bytes is most
//! of what answering `getTransaction` costs. This one takes four input bytes a step into limbs of
//! five digits (58^5 < 2^30, so a limb times 2^32 plus the carry fits in 64 bits): twenty times
//! fewer steps, the same text.

const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/// 58^5: each limb holds five base-58 digits.
const LIMB: u64 = 656_356_768;

/// `bytes` in base58: a leading '1' per leading zero byte, then the number's digits.
pub fn encode(bytes: &[u8]) -> String {
    let zeros = bytes.iter().take_while(|byte| **byte == 0).count();
    let rest = &bytes[zeros..];
    // Little-endian limbs of the number; each four-byte word multiplies it by 2^32.
    let mut limbs: Vec<u64> = Vec::with_capacity(rest.len() * 273 / 1000 + 1);
    let head = rest.len() % 4;
    let mut push_word = |word: u64, shift: u32| {
        let mut carry = word;
        for limb in limbs.iter_mut() {
            let value = (*limb << shift) | carry;
            *limb = value % LIMB;
            carry = value / LIMB;
        }
        while carry > 0 {
            limbs.push(carry % LIMB);
            carry /= LIMB;
        }
    };
    if head > 0 {
        let word = rest[..head].iter().fold(0u64, |acc, byte| (acc << 8) | u64::from(*byte));
        push_word(word, 8 * head as u32);
    }
    for chunk in rest[head..].chunks_exact(4) {
        push_word(u64::from(u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])), 32);
    }
    let mut digits: Vec<u8> = Vec::with_capacity(limbs.len() * 5);
    for limb in &limbs {
        let mut value = *limb;
        for _ in 0..5 {
            digits.push((value % 58) as u8);
            value /= 58;
        }
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let mut text = String::with_capacity(zeros + digits.len());
    text.extend(std::iter::repeat('1').take(zeros));
    text.extend(digits.iter().rev().map(|digit| ALPHABET[*digit as usize] as char));
    text
}

#[cfg(test)]
mod tests {
    use super::encode;

    /// A few fixed bytes per length, from a small linear congruential generator.
    fn bytes(length: usize, seed: u64) -> Vec<u8> {
        let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(length as u64);
        (0..length)
            .map(|_| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (state >> 33) as u8
            })
            .collect()
    }

    #[test]
    fn matches_bs58_for_every_length_up_to_700() {
        for length in 0..=700 {
            for input in [bytes(length, 1), bytes(length, 2), vec![0xff; length], vec![0; length], {
                let mut leading = bytes(length, 3);
                leading.iter_mut().take(length / 3).for_each(|byte| *byte = 0);
                leading
            }] {
                assert_eq!(encode(&input), bs58::encode(&input).into_string(), "length {length}: {input:?}");
            }
        }
    }

    #[test]
    fn encodes_keys_as_their_display() {
        let key = solana_pubkey::Pubkey::new_from_array(std::array::from_fn(|i| (i * 37 + 11) as u8));
        assert_eq!(encode(key.as_ref()), key.to_string());
    }
}
