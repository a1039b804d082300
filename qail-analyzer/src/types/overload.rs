//! PostgreSQL's overload resolution ("Type Conversion" chapter, operators and functions),
//! applied to a list of candidate signatures. `None` in the arguments is an `unknown`
//! (a string literal, NULL, or a parameter whose type is not fixed yet).

use crate::types::{category, implicit, is_preferred};
use qail_schema::snapshot::{Snapshot, TypeRef};

/// Outcome of resolution.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    /// The index of the chosen candidate.
    One(usize),
    /// No candidate accepts the arguments.
    NoMatch,
    /// Several candidates remain; the user must cast.
    Ambiguous,
}

/// Chooses among `cands` (each a list of parameter types of the same arity as `args`).
/// `binary` enables the rule "an unknown operand of a binary operator is assumed to have the
/// other operand's type" for the exact-match step.
pub(crate) fn pick(
    args: &[Option<&TypeRef>],
    cands: &[Vec<TypeRef>],
    binary: bool,
    snap: &Snapshot,
) -> Pick {
    if let Some(i) = exact(args, cands, binary) {
        return Pick::One(i);
    }
    let mut live: Vec<usize> = (0..cands.len())
        .filter(|&i| {
            cands[i].len() == args.len()
                && args
                    .iter()
                    .zip(&cands[i])
                    .all(|(a, p)| a.is_none_or(|a| implicit(a, p, snap)))
        })
        .collect();
    if live.len() <= 1 {
        return live.first().map_or(Pick::NoMatch, |&i| Pick::One(i));
    }
    keep_best(&mut live, |i| {
        args.iter()
            .zip(&cands[i])
            .filter(|(a, p)| a.is_some_and(|a| a == *p))
            .count()
    });
    keep_best(&mut live, |i| {
        args.iter()
            .zip(&cands[i])
            .filter(|(a, p)| a.is_some_and(|a| a != *p) && is_preferred(p))
            .count()
    });
    if live.len() > 1
        && args.iter().any(Option::is_none)
        && !unknown_positions(args, cands, &mut live, snap)
    {
        return Pick::Ambiguous;
    }
    if live.len() > 1 {
        same_known_type(args, cands, &mut live);
    }
    match live.as_slice() {
        [i] => Pick::One(*i),
        [] => Pick::NoMatch,
        _ => Pick::Ambiguous,
    }
}

fn exact(args: &[Option<&TypeRef>], cands: &[Vec<TypeRef>], binary: bool) -> Option<usize> {
    let filled: Vec<Option<&TypeRef>> = match (binary, args) {
        (true, [None, Some(r)]) => vec![Some(*r), Some(*r)],
        (true, [Some(l), None]) => vec![Some(*l), Some(*l)],
        _ => args.to_vec(),
    };
    if filled.iter().any(Option::is_none) {
        return None;
    }
    cands.iter().position(|c| {
        c.len() == filled.len()
            && c.iter()
                .zip(&filled)
                .all(|(p, a)| a.is_some_and(|a| a == p))
    })
}

fn keep_best(live: &mut Vec<usize>, score: impl Fn(usize) -> usize) {
    let best = live.iter().map(|&i| score(i)).max().unwrap_or(0);
    let kept: Vec<usize> = live.iter().copied().filter(|&i| score(i) == best).collect();
    if !kept.is_empty() {
        *live = kept;
    }
}

/// Step 3e: at unknown positions prefer the string category, else a single shared category,
/// then preferred types within it.
fn unknown_positions(
    args: &[Option<&TypeRef>],
    cands: &[Vec<TypeRef>],
    live: &mut Vec<usize>,
    snap: &Snapshot,
) -> bool {
    for (pos, _) in args.iter().enumerate().filter(|(_, a)| a.is_none()) {
        let cats: Vec<char> = live
            .iter()
            .map(|&i| category(&cands[i][pos], snap))
            .collect();
        let cat = if cats.contains(&'S') {
            'S'
        } else if cats.windows(2).all(|w| w[0] == w[1]) {
            cats[0]
        } else {
            return false;
        };
        live.retain(|&i| category(&cands[i][pos], snap) == cat);
        if live.iter().any(|&i| is_preferred(&cands[i][pos])) {
            live.retain(|&i| is_preferred(&cands[i][pos]));
        }
    }
    true
}

/// Step 3f: when all known arguments share one type, assume the unknowns have it too.
fn same_known_type(args: &[Option<&TypeRef>], cands: &[Vec<TypeRef>], live: &mut Vec<usize>) {
    let mut known = args.iter().flatten();
    let Some(first) = known.next() else { return };
    if known.any(|t| t != first) || args.iter().all(Option::is_some) {
        return;
    }
    let fits: Vec<usize> = live
        .iter()
        .copied()
        .filter(|&i| {
            args.iter()
                .zip(&cands[i])
                .all(|(a, p)| a.is_some() || p == *first)
        })
        .collect();
    if fits.len() == 1 {
        *live = fits;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::builtin;

    fn sigs(list: &[&[&str]]) -> Vec<Vec<TypeRef>> {
        list.iter()
            .map(|s| s.iter().map(|n| builtin(n)).collect())
            .collect()
    }

    #[test]
    fn exact_and_unknown_binary() {
        let s = Snapshot::default();
        let c = sigs(&[&["int4", "int4"], &["text", "text"]]);
        let int4 = builtin("int4");
        assert_eq!(pick(&[Some(&int4), None], &c, true, &s), Pick::One(0));
        assert_eq!(pick(&[None, None], &c, true, &s), Pick::One(1));
    }

    #[test]
    fn coercion_prefers_exact_then_preferred() {
        let s = Snapshot::default();
        let c = sigs(&[
            &["numeric", "numeric"],
            &["float8", "float8"],
            &["int8", "int8"],
        ]);
        let (i4, num) = (builtin("int4"), builtin("numeric"));
        assert_eq!(pick(&[Some(&i4), Some(&num)], &c, true, &s), Pick::One(0));
        let t = sigs(&[&["text", "text"], &["bpchar", "bpchar"]]);
        let vc = builtin("varchar");
        assert_eq!(pick(&[Some(&vc), Some(&vc)], &t, true, &s), Pick::One(0));
    }

    #[test]
    fn unknown_with_mixed_categories_is_ambiguous() {
        let s = Snapshot::default();
        let c = sigs(&[&["date", "int4"], &["date", "interval"], &["date", "time"]]);
        let d = builtin("date");
        assert_eq!(pick(&[Some(&d), None], &c, true, &s), Pick::Ambiguous);
    }
}
