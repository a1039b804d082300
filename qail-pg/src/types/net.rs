//! Network types (feature `net`): `inet` ↔ `IpAddr` and [`Inet`], `cidr` ↔ [`Cidr`],
//! `macaddr` ↔ [`MacAddr`].
//!
//! `inet`/`cidr` binary form (`inet_send` in `src/backend/utils/adt/network.c`): family
//! (2 = IPv4, 3 = IPv6), prefix bits, is-cidr flag, address length, address bytes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::reader::Reader;
use super::{BoxError, IsNull, Oid, fixed, oid, put_bytes, scalar_type};

/// PostgreSQL's `PGSQL_AF_INET`.
const AF_INET: u8 = 2;
/// PostgreSQL's `PGSQL_AF_INET6` (`AF_INET + 1`, not the platform's value).
const AF_INET6: u8 = 3;

/// An `inet` value: a host address with an optional netmask length, e.g. `10.0.0.7/24`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Inet {
    /// The address.
    pub addr: IpAddr,
    /// The netmask length: 0–32 for IPv4, 0–128 for IPv6.
    pub prefix: u8,
}

/// A `cidr` value: a network, e.g. `10.0.0.0/8`. The server refuses host bits set right of
/// the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    /// The network address.
    pub addr: IpAddr,
    /// The prefix length: 0–32 for IPv4, 0–128 for IPv6.
    pub prefix: u8,
}

/// A `macaddr` value: six bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

/// The full prefix length of an address.
fn full(addr: IpAddr) -> u8 {
    if addr.is_ipv4() { 32 } else { 128 }
}

/// Writes an address with its prefix.
fn put(addr: IpAddr, prefix: u8, cidr: bool, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
    if prefix > full(addr) {
        return Err(format!(
            "prefix /{prefix} is too long for {addr}: use at most /{}",
            full(addr)
        )
        .into());
    }
    match addr {
        IpAddr::V4(a) => {
            buf.extend_from_slice(&[AF_INET, prefix, u8::from(cidr), 4]);
            buf.extend_from_slice(&a.octets());
        }
        IpAddr::V6(a) => {
            buf.extend_from_slice(&[AF_INET6, prefix, u8::from(cidr), 16]);
            buf.extend_from_slice(&a.octets());
        }
    }
    Ok(IsNull::No)
}

/// Reads an address and its prefix.
fn get(ty: Oid, raw: &[u8]) -> Result<(IpAddr, u8), BoxError> {
    let mut r = Reader::new(ty, raw);
    let family = r.u8()?;
    let prefix = r.u8()?;
    let _is_cidr = r.u8()?;
    let len = r.u8()?;
    let addr = match (family, len) {
        (AF_INET, 4) => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(r.take(4)?)?)),
        (AF_INET6, 16) => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(r.take(16)?)?)),
        _ => {
            return Err(format!(
                "a PostgreSQL `{}` value has address family {family} with {len} bytes: the \
                 server sent a different type than announced",
                oid::describe(ty)
            )
            .into());
        }
    };
    r.finish()?;
    if prefix > full(addr) {
        return Err(format!(
            "a PostgreSQL `{}` value has prefix /{prefix} for {addr}",
            oid::describe(ty)
        )
        .into());
    }
    Ok((addr, prefix))
}

scalar_type!(IpAddr => oid::INET, array oid::INET_ARRAY,
encode(|&v, _, buf| put(v, full(v), false, buf)),
decode(|ty, raw| {
    let (addr, prefix) = get(ty, raw)?;
    if prefix != full(addr) {
        return Err(format!(
            "the PostgreSQL `inet` value {addr}/{prefix} has a netmask, which `IpAddr` would \
             drop: read it as `qail::types::Inet`, or select `host(col)::inet`"
        )
        .into());
    }
    Ok(addr)
}));

scalar_type!(Inet => oid::INET, array oid::INET_ARRAY,
    encode(|v, _, buf| put(v.addr, v.prefix, false, buf)),
    decode(|ty, raw| get(ty, raw).map(|(addr, prefix)| Inet { addr, prefix })));

scalar_type!(Cidr => oid::CIDR, array oid::CIDR_ARRAY,
    encode(|v, _, buf| put(v.addr, v.prefix, true, buf)),
    decode(|ty, raw| get(ty, raw).map(|(addr, prefix)| Cidr { addr, prefix })));

scalar_type!(MacAddr => oid::MACADDR, array oid::MACADDR_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.0)),
    decode(|ty, raw| fixed(ty, raw).map(MacAddr)));

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::super::{Decode, Encode};
    use super::*;

    #[test]
    fn inet_bytes() {
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7));
        assert_eq!(enc(&a, oid::INET), Some(vec![2, 32, 0, 4, 10, 0, 0, 7]));
        let net = Inet {
            addr: a,
            prefix: 24,
        };
        assert_eq!(enc(&net, oid::INET), Some(vec![2, 24, 0, 4, 10, 0, 0, 7]));
        assert_eq!(dec::<Inet>(oid::INET, &[2, 24, 0, 4, 10, 0, 0, 7]), Ok(net));
        let six = IpAddr::V6(Ipv6Addr::LOCALHOST);
        let raw = enc(&six, oid::INET).expect("not null");
        assert_eq!(raw[..4], [3, 128, 0, 16]);
        assert_eq!(dec::<IpAddr>(oid::INET, &raw), Ok(six));
    }

    #[test]
    fn cidr_sets_the_flag() {
        let c = Cidr {
            addr: IpAddr::V4(Ipv4Addr::new(192, 168, 0, 0)),
            prefix: 16,
        };
        assert_eq!(enc(&c, oid::CIDR), Some(vec![2, 16, 1, 4, 192, 168, 0, 0]));
        assert_eq!(
            dec::<Cidr>(oid::CIDR, &[2, 16, 1, 4, 192, 168, 0, 0]),
            Ok(c)
        );
        assert!(!<Cidr as Decode>::accepts(oid::INET));
    }

    #[test]
    fn lossy_or_bad_values_are_errors() {
        let err = dec::<IpAddr>(oid::INET, &[2, 24, 0, 4, 10, 0, 0, 7]).unwrap_err();
        assert!(err.contains("Inet"), "{err}");
        assert!(dec::<Inet>(oid::INET, &[2, 33, 0, 4, 10, 0, 0, 7]).is_err());
        assert!(dec::<Inet>(oid::INET, &[9, 32, 0, 4, 10, 0, 0, 7]).is_err());
        assert!(dec::<Inet>(oid::INET, &[2, 32, 0, 4, 10, 0]).is_err());
        let mut buf = Vec::new();
        let bad = Inet {
            addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
            prefix: 40,
        };
        assert!(bad.encode_checked(oid::INET, &mut buf).is_err());
    }

    #[test]
    fn macaddr_is_six_bytes() {
        let m = MacAddr([0x08, 0, 0x2b, 1, 2, 3]);
        assert_eq!(enc(&m, oid::MACADDR), Some(vec![8, 0, 0x2b, 1, 2, 3]));
        assert_eq!(dec::<MacAddr>(oid::MACADDR, &[8, 0, 0x2b, 1, 2, 3]), Ok(m));
        assert!(dec::<MacAddr>(oid::MACADDR, &[0; 8]).is_err());
    }
}
