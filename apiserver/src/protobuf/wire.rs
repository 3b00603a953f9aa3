//! The protobuf wire format: varints, keys, length-delimited fields and
//! skipping. Every read is bounds-checked and reports a [`WireError`]
//! instead of panicking.

use std::fmt;

/// The wire type in the low three bits of a field key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireType {
    /// A base-128 varint (int32, int64, bool, enums).
    Varint,
    /// Eight little-endian bytes (fixed64, sfixed64, double).
    Fixed64,
    /// A varint length followed by that many bytes (strings, bytes,
    /// messages, packed repeated scalars).
    Len,
    /// Four little-endian bytes (fixed32, sfixed32, float).
    Fixed32,
}

impl WireType {
    fn from_bits(bits: u64) -> Result<Self, WireError> {
        match bits {
            0 => Ok(Self::Varint),
            1 => Ok(Self::Fixed64),
            2 => Ok(Self::Len),
            3 | 4 => Err(WireError::Group),
            5 => Ok(Self::Fixed32),
            // The mask keeps three bits, so this is 6 or 7.
            other => Err(WireError::InvalidWireType(other as u8)),
        }
    }

    /// The name used in error messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Varint => "varint",
            Self::Fixed64 => "fixed64",
            Self::Len => "length-delimited",
            Self::Fixed32 => "fixed32",
        }
    }
}

/// One field value as read from the wire, before the schema gives it a
/// meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawValue<'a> {
    /// A varint, as the raw 64-bit pattern.
    Varint(u64),
    /// A fixed64 value.
    Fixed64(u64),
    /// A fixed32 value.
    Fixed32(u32),
    /// The payload of a length-delimited field.
    Len(&'a [u8]),
}

impl RawValue<'_> {
    /// The wire type this value was read with.
    pub(crate) fn wire_type(&self) -> WireType {
        match self {
            Self::Varint(_) => WireType::Varint,
            Self::Fixed64(_) => WireType::Fixed64,
            Self::Fixed32(_) => WireType::Fixed32,
            Self::Len(_) => WireType::Len,
        }
    }
}

/// A violation of the wire format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WireError {
    /// The input ended inside a varint.
    TruncatedVarint,
    /// A varint longer than ten bytes or wider than 64 bits.
    VarintOverflow,
    /// A length or fixed-width value runs past the end of the input.
    Truncated {
        /// Bytes the field claims.
        needed: u64,
        /// Bytes left in the enclosing message.
        remaining: usize,
    },
    /// Wire type 6 or 7.
    InvalidWireType(u8),
    /// Wire types 3 and 4 (groups), which Kubernetes never uses.
    Group,
    /// Field number 0 or above the protobuf maximum.
    InvalidFieldNumber(u64),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TruncatedVarint => f.write_str("truncated varint"),
            Self::VarintOverflow => f.write_str("varint overflows 64 bits"),
            Self::Truncated { needed, remaining } => {
                write!(f, "field needs {needed} bytes but only {remaining} remain")
            }
            Self::InvalidWireType(t) => write!(f, "invalid wire type {t}"),
            Self::Group => f.write_str("protobuf groups are not supported"),
            Self::InvalidFieldNumber(n) => write!(f, "invalid field number {n}"),
        }
    }
}

/// The largest field number protobuf allows (2^29 - 1).
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// A cursor over one message's bytes.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Whether every byte has been consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Reads a base-128 varint of at most ten bytes.
    pub(crate) fn varint(&mut self) -> Result<u64, WireError> {
        let mut value: u64 = 0;
        for i in 0..10u32 {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(WireError::TruncatedVarint);
            };
            self.pos += 1;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && byte > 1 {
                return Err(WireError::VarintOverflow);
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(WireError::VarintOverflow)
    }

    /// Reads a field key: the field number and the wire type.
    pub(crate) fn key(&mut self) -> Result<(u32, WireType), WireError> {
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > MAX_FIELD_NUMBER {
            return Err(WireError::InvalidFieldNumber(number));
        }
        let wire_type = WireType::from_bits(key & 7)?;
        // MAX_FIELD_NUMBER fits in u32.
        Ok((number as u32, wire_type))
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], WireError> {
        let remaining = self.remaining();
        let truncated = WireError::Truncated {
            needed: len,
            remaining,
        };
        let len = usize::try_from(len).map_err(|_| truncated.clone())?;
        if len > remaining {
            return Err(truncated);
        }
        let start = self.pos;
        self.pos += len;
        self.buf.get(start..self.pos).ok_or(truncated)
    }

    /// Reads the value of a field of the given wire type.
    pub(crate) fn value(&mut self, wire_type: WireType) -> Result<RawValue<'a>, WireError> {
        match wire_type {
            WireType::Varint => self.varint().map(RawValue::Varint),
            WireType::Fixed64 => {
                let bytes = self.take(8)?;
                let mut array = [0u8; 8];
                array.copy_from_slice(bytes);
                Ok(RawValue::Fixed64(u64::from_le_bytes(array)))
            }
            WireType::Fixed32 => {
                let bytes = self.take(4)?;
                let mut array = [0u8; 4];
                array.copy_from_slice(bytes);
                Ok(RawValue::Fixed32(u32::from_le_bytes(array)))
            }
            WireType::Len => {
                let len = self.varint()?;
                self.take(len).map(RawValue::Len)
            }
        }
    }

    /// Reads the next field: its number and value. Unknown fields are
    /// "skipped" by reading and discarding this.
    pub(crate) fn field(&mut self) -> Result<(u32, RawValue<'a>), WireError> {
        let (number, wire_type) = self.key()?;
        let value = self.value(wire_type)?;
        Ok((number, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        let mut r = Reader::new(&[0x00, 0x01, 0x96, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(r.varint(), Ok(0));
        assert_eq!(r.varint(), Ok(1));
        assert_eq!(r.varint(), Ok(150));
        assert_eq!(r.varint(), Ok(0xffff_ffff));
        assert!(r.is_empty());
        // -1 as a 64-bit two's complement varint.
        let minus_one = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Reader::new(&minus_one).varint(), Ok(u64::MAX));
    }

    #[test]
    fn varint_errors() {
        assert_eq!(Reader::new(&[]).varint(), Err(WireError::TruncatedVarint));
        assert_eq!(
            Reader::new(&[0x80, 0x80]).varint(),
            Err(WireError::TruncatedVarint)
        );
        let too_long = [0xff; 11];
        assert_eq!(
            Reader::new(&too_long).varint(),
            Err(WireError::VarintOverflow)
        );
        let too_wide = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(
            Reader::new(&too_wide).varint(),
            Err(WireError::VarintOverflow)
        );
    }

    #[test]
    fn keys_and_values() {
        // field 1 varint 150, field 2 "hi", field 3 fixed32, field 4 fixed64
        let bytes = [
            0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x1d, 1, 0, 0, 0, 0x21, 2, 0, 0, 0, 0, 0, 0,
            0,
        ];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.field(), Ok((1, RawValue::Varint(150))));
        assert_eq!(r.field(), Ok((2, RawValue::Len(b"hi"))));
        assert_eq!(r.field(), Ok((3, RawValue::Fixed32(1))));
        assert_eq!(r.field(), Ok((4, RawValue::Fixed64(2))));
        assert!(r.is_empty());
    }

    #[test]
    fn key_errors() {
        assert_eq!(
            Reader::new(&[0x00]).key(),
            Err(WireError::InvalidFieldNumber(0))
        );
        assert_eq!(Reader::new(&[0x0b]).key(), Err(WireError::Group));
        assert_eq!(
            Reader::new(&[0x0e]).key(),
            Err(WireError::InvalidWireType(6))
        );
    }

    #[test]
    fn length_errors() {
        // Claims 5 bytes, has 1.
        assert_eq!(
            Reader::new(&[0x12, 0x05, b'a']).field(),
            Err(WireError::Truncated {
                needed: 5,
                remaining: 1
            })
        );
        // A length near u64::MAX.
        let huge = [
            0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert!(matches!(
            Reader::new(&huge).field(),
            Err(WireError::Truncated { .. })
        ));
        assert!(matches!(
            Reader::new(&[0x21, 1, 2]).field(),
            Err(WireError::Truncated { .. })
        ));
    }
}
