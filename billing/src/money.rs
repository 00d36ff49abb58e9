//! Currencies and the one rounding rule.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

/// A currency by its ISO 4217 code, with the digits of its minor unit
/// (2 for USD's cents, 0 for JPY).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Currency {
    pub code: String,
    pub minor_units: u32,
}

impl Currency {
    /// `amount` rounded to the minor unit, half away from zero (0.125 USD is
    /// 0.13, -0.125 is -0.13): the rounding of every invoice line.
    pub fn round(&self, amount: Decimal) -> Decimal {
        amount.round_dp_with_strategy(self.minor_units, RoundingStrategy::MidpointAwayFromZero)
    }

    /// `amount` as text with exactly the minor unit's digits (`12.50`).
    pub fn format(&self, amount: Decimal) -> String {
        format!("{:.*}", self.minor_units as usize, self.round(amount))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn usd() -> Currency {
        Currency { code: "USD".into(), minor_units: 2 }
    }

    #[test]
    fn midpoints_round_away_from_zero() {
        let d = |s: &str| Decimal::from_str(s).unwrap();
        assert_eq!(usd().round(d("0.125")), d("0.13"));
        assert_eq!(usd().round(d("-0.125")), d("-0.13"));
        assert_eq!(usd().round(d("0.124999")), d("0.12"));
        assert_eq!(usd().round(d("2.5")), d("2.50"));
        let yen = Currency { code: "JPY".into(), minor_units: 0 };
        assert_eq!(yen.round(d("2.5")), d("3"));
        assert_eq!(usd().format(d("12.5")), "12.50");
        assert_eq!(usd().format(d("0")), "0.00");
    }
}
