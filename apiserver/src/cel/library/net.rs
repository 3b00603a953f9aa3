//! The IP and CIDR libraries (upstream `library.IP`, `library.CIDR`):
//! `ip(s)`, `isIP(s)`, `ip.isCanonical(s)`, `string(ip)`, and on a `net.IP`:
//! `family`, `isUnspecified`, `isLoopback`, `isLinkLocalMulticast`,
//! `isLinkLocalUnicast`, `isGlobalUnicast`; `cidr(s)`, `isCIDR(s)`,
//! `string(cidr)`, and on a `net.CIDR`: `containsIP`, `containsCIDR` (an
//! object or a string), `ip`, `masked`, `prefixLength`.
//!
//! Parsing is strict as upstream's (Go's `netip`): no leading zeros in IPv4
//! octets, no zones, and IPv4-mapped IPv6 addresses are refused.

use std::net::IpAddr;

use ::cel::common::types::{CelBool, CelInt, CelString};
use ::cel::{DeclarationError, Env, ExecutionError};

use super::{fail, object_type};

/// A `net.IP`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ip(pub IpAddr);

object_type!(Ip, IP_TYPE, "net.IP");

/// A `net.CIDR`: an address (not necessarily masked) and a prefix length.
#[derive(Clone, Debug, PartialEq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

object_type!(Cidr, CIDR_TYPE, "net.CIDR");

/// Parses an IP address as upstream's `ip()` does.
pub fn parse_ip(s: &str) -> Result<IpAddr, String> {
    let addr: IpAddr = s
        .parse()
        .map_err(|_| format!("IP Address {s:?} parse error during conversion from string: ParseAddr({s:?}): unable to parse IP"))?;
    if let IpAddr::V6(v6) = addr {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
        }
    }
    Ok(addr)
}

/// Parses a CIDR as upstream's `cidr()` does.
pub fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let bad = || {
        format!("network address parse error during conversion from string: netip.ParsePrefix({s:?}): invalid prefix")
    };
    let (addr, len) = s.split_once('/').ok_or_else(bad)?;
    let addr = parse_ip(addr)?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if len.is_empty()
        || len.len() > 3
        || !len.bytes().all(|b| b.is_ascii_digit())
        || (len.len() > 1 && len.starts_with('0'))
    {
        return Err(bad());
    }
    let prefix: u8 = len.parse().map_err(|_| bad())?;
    if prefix > max {
        return Err(bad());
    }
    Ok(Cidr { addr, prefix })
}

fn bits(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

impl Cidr {
    fn width(&self) -> u8 {
        if self.addr.is_ipv4() {
            32
        } else {
            128
        }
    }

    fn mask(&self) -> u128 {
        let host_bits = u32::from(self.width() - self.prefix);
        let all = if self.width() == 32 {
            u128::from(u32::MAX)
        } else {
            u128::MAX
        };
        all.checked_shl(host_bits).unwrap_or(0) & all
    }

    /// Whether `ip` is inside this network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4()
            && bits(ip) & self.mask() == bits(self.addr) & self.mask()
    }

    fn masked(&self) -> Cidr {
        let b = bits(self.addr) & self.mask();
        let addr = match self.addr {
            IpAddr::V4(_) => IpAddr::V4((b as u32).into()),
            IpAddr::V6(_) => IpAddr::V6(b.into()),
        };
        Cidr {
            addr,
            prefix: self.prefix,
        }
    }
}

fn ip(s: &CelString<'_>) -> Result<Ip, ExecutionError> {
    parse_ip(s).map(Ip).map_err(|e| fail("ip", e))
}

fn is_ip(s: &CelString<'_>) -> CelBool {
    parse_ip(s).is_ok().into()
}

fn is_canonical(s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr = parse_ip(s).map_err(|e| fail("ip.isCanonical", e))?;
    Ok((addr.to_string() == s.inner()).into())
}

fn ip_string(ip: &Ip) -> CelString<'static> {
    ip.0.to_string().into()
}

fn family(ip: &Ip) -> CelInt {
    if ip.0.is_ipv4() { 4 } else { 6 }.into()
}

fn is_unspecified(ip: &Ip) -> CelBool {
    ip.0.is_unspecified().into()
}

fn is_loopback(ip: &Ip) -> CelBool {
    ip.0.is_loopback().into()
}

fn is_link_local_multicast(ip: &Ip) -> CelBool {
    match ip.0 {
        IpAddr::V4(a) => a.octets()[..3] == [224, 0, 0],
        IpAddr::V6(a) => a.octets()[0] == 0xff && a.octets()[1] & 0x0f == 0x02,
    }
    .into()
}

fn link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a.octets()[..2] == [169, 254],
        IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_unicast(ip: &Ip) -> CelBool {
    link_local_unicast(ip.0).into()
}

fn is_global_unicast(ip: &Ip) -> CelBool {
    let a = ip.0;
    let broadcast = matches!(a, IpAddr::V4(v) if v.is_broadcast());
    (!a.is_unspecified()
        && !a.is_loopback()
        && !a.is_multicast()
        && !link_local_unicast(a)
        && !broadcast)
        .into()
}

fn cidr(s: &CelString<'_>) -> Result<Cidr, ExecutionError> {
    parse_cidr(s).map_err(|e| fail("cidr", e))
}

fn is_cidr(s: &CelString<'_>) -> CelBool {
    parse_cidr(s).is_ok().into()
}

fn cidr_string(c: &Cidr) -> CelString<'static> {
    format!("{}/{}", c.addr, c.prefix).into()
}

fn contains_ip(c: &Cidr, ip: &Ip) -> CelBool {
    c.contains(ip.0).into()
}

fn contains_ip_string(c: &Cidr, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let ip = parse_ip(s).map_err(|e| fail("containsIP", e))?;
    Ok(c.contains(ip).into())
}

fn contains_cidr(c: &Cidr, other: &Cidr) -> CelBool {
    (other.prefix >= c.prefix && c.contains(other.addr)).into()
}

fn contains_cidr_string(c: &Cidr, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let other = parse_cidr(s).map_err(|e| fail("containsCIDR", e))?;
    Ok(contains_cidr(c, &other))
}

fn cidr_ip(c: &Cidr) -> Ip {
    Ip(c.addr)
}

fn masked(c: &Cidr) -> Cidr {
    c.masked()
}

fn prefix_length(c: &Cidr) -> CelInt {
    i64::from(c.prefix).into()
}

/// Registers the IP and CIDR libraries.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    ::cel::add_overload!(env, fn ip: (CelString) -> Result<Ip>)?;
    ::cel::add_overload!(env, fn is_ip: (CelString) -> CelBool, name = "isIP")?;
    ::cel::add_overload!(env, fn is_canonical: (CelString) -> Result<CelBool>, name = "ip.isCanonical")?;
    ::cel::add_overload!(env, fn ip_string: (Ip) -> CelString, name = "string")?;
    ::cel::add_member_overload!(env, fn family: (Ip) -> CelInt)?;
    ::cel::add_member_overload!(env, fn is_unspecified: (Ip) -> CelBool)?;
    ::cel::add_member_overload!(env, fn is_loopback: (Ip) -> CelBool)?;
    ::cel::add_member_overload!(env, fn is_link_local_multicast: (Ip) -> CelBool)?;
    ::cel::add_member_overload!(env, fn is_link_local_unicast: (Ip) -> CelBool)?;
    ::cel::add_member_overload!(env, fn is_global_unicast: (Ip) -> CelBool)?;
    ::cel::add_overload!(env, fn cidr: (CelString) -> Result<Cidr>)?;
    ::cel::add_overload!(env, fn is_cidr: (CelString) -> CelBool, name = "isCIDR")?;
    ::cel::add_overload!(env, fn cidr_string: (Cidr) -> CelString, name = "string")?;
    ::cel::add_member_overload!(env, fn contains_ip: (Cidr, Ip) -> CelBool, name = "containsIP")?;
    ::cel::add_member_overload!(env, fn contains_ip_string: (Cidr, CelString) -> Result<CelBool>, name = "containsIP")?;
    ::cel::add_member_overload!(env, fn contains_cidr: (Cidr, Cidr) -> CelBool, name = "containsCIDR")?;
    ::cel::add_member_overload!(env, fn contains_cidr_string: (Cidr, CelString) -> Result<CelBool>, name = "containsCIDR")?;
    ::cel::add_member_overload!(env, fn cidr_ip: (Cidr) -> Ip, name = "ip")?;
    ::cel::add_member_overload!(env, fn masked: (Cidr) -> Cidr)?;
    ::cel::add_member_overload!(env, fn prefix_length: (Cidr) -> CelInt)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_err, assert_true};

    #[test]
    fn ip_functions() {
        assert_true(&[
            "isIP('192.168.0.1') && isIP('2001:db8::1') && !isIP('192.168.0.01') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')",
            "ip('192.168.0.1').family() == 4 && ip('::1').family() == 6",
            "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('10.0.0.1').isLoopback()",
            "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()",
            "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()",
            "ip('169.254.1.1').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()",
            "ip('10.0.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
            "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
            "string(ip('2001:db8:0:0::1')) == '2001:db8::1'",
            "ip('10.0.0.1') == ip('10.0.0.1') && ip('10.0.0.1') != ip('10.0.0.2')",
        ]);
        assert_err(&[
            ("ip('1.2.3')", "parse error"),
            ("ip('::ffff:1.2.3.4')", "IPv4-mapped"),
        ]);
    }

    #[test]
    fn cidr_functions() {
        assert_true(&[
            "isCIDR('10.0.0.0/8') && isCIDR('2001:db8::/32') && !isCIDR('10.0.0.0/33') && !isCIDR('10.0.0.0') && !isCIDR('10.0.0.0/08')",
            "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && cidr('10.0.0.0/8').containsIP('10.1.2.3')",
            "!cidr('10.0.0.0/8').containsIP('11.0.0.1') && !cidr('10.0.0.0/8').containsIP('::1')",
            "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))",
            "cidr('192.168.1.5/24').ip() == ip('192.168.1.5')",
            "cidr('192.168.1.5/24').masked() == cidr('192.168.1.0/24')",
            "string(cidr('192.168.1.5/24').masked()) == '192.168.1.0/24'",
            "cidr('2001:db8::/32').prefixLength() == 32",
            "cidr('0.0.0.0/0').containsIP('1.2.3.4') && cidr('::/0').containsCIDR('2001:db8::/32')",
        ]);
        assert_err(&[("cidr('10.0.0.0')", "invalid prefix")]);
    }
}
