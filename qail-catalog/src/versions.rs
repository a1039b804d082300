//! The PostgreSQL major versions a catalog entry exists in, and a project's target range.

use core::fmt;

/// The oldest major version the catalog covers.
pub const OLDEST: u8 = 13;

/// The newest major version the catalog covers.
pub const NEWEST: u8 = 18;

/// A set of PostgreSQL major versions between [`OLDEST`] and [`NEWEST`]: bit `n - OLDEST`
/// stands for major `n`. One byte per entry keeps the generated table small; most entries
/// are in [`Versions::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Versions(u8);

impl Versions {
    /// Every supported major version.
    pub const ALL: Versions = Versions::span(OLDEST, NEWEST);

    /// The majors `first..=last`, clamped to [`OLDEST`]..=[`NEWEST`]; empty when
    /// `first > last`.
    pub const fn span(first: u8, last: u8) -> Versions {
        let mut bits = 0;
        let mut major = if first < OLDEST { OLDEST } else { first };
        while major <= last && major <= NEWEST {
            bits |= 1 << (major - OLDEST);
            major += 1;
        }
        Versions(bits)
    }

    /// The set with these bits (bit `n - OLDEST` for major `n`); bits past [`NEWEST`] are
    /// dropped.
    pub const fn from_bits(bits: u8) -> Versions {
        Versions(bits & Versions::ALL.0)
    }

    /// The bits of the set (bit `n - OLDEST` for major `n`).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether major `major` is in the set.
    pub const fn contains(self, major: u8) -> bool {
        major >= OLDEST && major <= NEWEST && self.0 & (1 << (major - OLDEST)) != 0
    }

    /// Whether every major of `other` is in the set.
    pub const fn covers(self, other: Versions) -> bool {
        other.0 & !self.0 == 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The majors in both sets.
    pub const fn and(self, other: Versions) -> Versions {
        Versions(self.0 & other.0)
    }

    /// The majors in either set.
    pub const fn or(self, other: Versions) -> Versions {
        Versions(self.0 | other.0)
    }

    /// The majors of `self` not in `other`.
    pub const fn without(self, other: Versions) -> Versions {
        Versions(self.0 & !other.0)
    }

    /// The oldest major in the set.
    pub fn first(self) -> Option<u8> {
        self.majors().next()
    }

    /// The newest major in the set.
    pub fn last(self) -> Option<u8> {
        self.majors().last()
    }

    /// The majors in the set, oldest first.
    pub fn majors(self) -> impl Iterator<Item = u8> {
        (OLDEST..=NEWEST).filter(move |m| self.contains(*m))
    }

    /// Whether the set is one run of consecutive majors (or empty).
    pub fn is_span(self) -> bool {
        match (self.first(), self.last()) {
            (Some(first), Some(last)) => Versions::span(first, last) == self,
            _ => true,
        }
    }

    /// Parses a range as written in configuration: `16`, `15..=18`, `15..`, `..=16`
    /// (open ends are [`OLDEST`] and [`NEWEST`]). `Err` says what is wrong.
    pub fn parse(text: &str) -> Result<Versions, ParseError> {
        let text = text.trim();
        let major = |s: &str, default: u8| -> Result<u8, ParseError> {
            let s = s.trim();
            if s.is_empty() {
                return Ok(default);
            }
            let n: u8 = s.parse().map_err(|_| ParseError::Syntax)?;
            if (OLDEST..=NEWEST).contains(&n) {
                Ok(n)
            } else {
                Err(ParseError::Unsupported(n))
            }
        };
        let (first, last) = match text.split_once("..") {
            None => {
                let n = major(text, 0)?;
                if text.is_empty() {
                    return Err(ParseError::Syntax);
                }
                (n, n)
            }
            Some((a, b)) => {
                let b = match b.strip_prefix('=') {
                    Some(b) if !b.trim().is_empty() => b,
                    None if b.trim().is_empty() => b,
                    _ => return Err(ParseError::Syntax),
                };
                (major(a, OLDEST)?, major(b, NEWEST)?)
            }
        };
        if first > last {
            return Err(ParseError::Syntax);
        }
        Ok(Versions::span(first, last))
    }
}

/// Why a version range did not parse ([`Versions::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// Not `N`, `A..=B`, `A..` or `..=B` with `A <= B`.
    Syntax,
    /// A major version outside [`OLDEST`]..=[`NEWEST`].
    Unsupported(u8),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Syntax => write!(
                f,
                "expected a PostgreSQL major version or range such as \"16\" or \"15..=18\""
            ),
            ParseError::Unsupported(n) => write!(
                f,
                "PostgreSQL {n} is not supported: qail supports {OLDEST} to {NEWEST}"
            ),
        }
    }
}

/// `16`, `16 to 18`, `13, 15 to 18`: how messages name the set.
impl fmt::Display for Versions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        let mut majors = self.majors().peekable();
        while let Some(first) = majors.next() {
            let mut last = first;
            while majors.peek() == Some(&(last + 1)) {
                last += 1;
                majors.next();
            }
            if first == last {
                write!(f, "{sep}{first}")?;
            } else {
                write!(f, "{sep}{first} to {last}")?;
            }
            sep = ", ";
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate alloc;
    use alloc::string::ToString;

    #[test]
    fn spans_and_sets() {
        assert_eq!(Versions::ALL.first(), Some(OLDEST));
        assert_eq!(Versions::ALL.last(), Some(NEWEST));
        assert!(Versions::span(16, 18).contains(17));
        assert!(!Versions::span(16, 18).contains(15));
        assert!(Versions::ALL.covers(Versions::span(15, 18)));
        assert!(!Versions::span(17, 18).covers(Versions::span(16, 18)));
        assert!(Versions::span(19, 20).is_empty());
        assert!(!Versions::from_bits(0b101).is_span());
        assert_eq!(Versions::from_bits(0b111101).to_string(), "13, 15 to 18");
        assert_eq!(Versions::span(18, 18).to_string(), "18");
    }

    #[test]
    fn parses_ranges() {
        assert_eq!(Versions::parse("15..=18"), Ok(Versions::span(15, 18)));
        assert_eq!(Versions::parse(" 16 "), Ok(Versions::span(16, 16)));
        assert_eq!(Versions::parse("16.."), Ok(Versions::span(16, 18)));
        assert_eq!(Versions::parse("16..="), Err(ParseError::Syntax));
        assert_eq!(Versions::parse("16..18"), Err(ParseError::Syntax));
        assert_eq!(Versions::parse("..=14"), Ok(Versions::span(13, 14)));
        assert_eq!(Versions::parse("12..=18"), Err(ParseError::Unsupported(12)));
        assert_eq!(Versions::parse("18..=16"), Err(ParseError::Syntax));
        assert_eq!(Versions::parse("x"), Err(ParseError::Syntax));
        assert_eq!(Versions::parse(""), Err(ParseError::Syntax));
    }
}
