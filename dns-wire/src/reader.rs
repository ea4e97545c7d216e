//! A bounds-checked cursor over a byte slice: the only way the crate reads input.

use crate::error::{Error, ErrorKind, Result};
use crate::name::{Compression, NameRef};

/// Reads big-endian integers and slices, failing with the offset where the input ended.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Whether the names that may be compressed were already validated where they stand.
    names_checked: bool,
}

impl<'a> Reader<'a> {
    /// A cursor at `pos` in `buf`.
    pub(crate) const fn new(buf: &'a [u8], pos: usize) -> Self {
        Self {
            buf,
            pos,
            names_checked: false,
        }
    }

    /// A cursor at `pos` in `buf` whose names read with [`Compression::Allowed`] were
    /// validated already (by the pass that set `checked`), in this same `buf`: they are only
    /// skipped. With `checked` false, the same as [`Reader::new`].
    pub(crate) const fn with_names_checked(buf: &'a [u8], pos: usize, checked: bool) -> Self {
        Self {
            buf,
            pos,
            names_checked: checked,
        }
    }

    /// The current offset.
    pub(crate) const fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left from the current offset.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(Error::new(ErrorKind::UnexpectedEnd { what }, self.pos))?;
        let out = self
            .buf
            .get(self.pos..end)
            .ok_or(Error::new(ErrorKind::UnexpectedEnd { what }, self.pos))?;
        self.pos = end;
        Ok(out)
    }

    /// The next `N` bytes as an array.
    pub(crate) fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let slice = self.bytes(N, what)?;
        let mut out = [0; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    /// The rest of the buffer.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let out = self.buf.get(self.pos..).unwrap_or_default();
        self.pos = self.buf.len();
        out
    }

    /// One byte.
    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        self.array::<1>(what).map(|[b]| b)
    }

    /// A big-endian 16-bit integer.
    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16> {
        self.array(what).map(u16::from_be_bytes)
    }

    /// A big-endian 32-bit integer.
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        self.array(what).map(u32::from_be_bytes)
    }

    /// A `<character-string>`: a length byte and that many bytes (RFC 1035 §3.3).
    pub(crate) fn character_string(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let len = self.u8(what)?;
        self.bytes(usize::from(len), what)
    }
}

impl<'a> Reader<'a> {
    /// A name at the cursor, validated; the cursor moves past its stored form.
    pub(crate) fn name(&mut self, compression: Compression) -> Result<NameRef<'a>> {
        if self.names_checked && compression == Compression::Allowed {
            let name = NameRef::validated(self.buf, self.pos);
            self.pos = crate::name::skip(self.buf, self.pos);
            return Ok(name);
        }
        let (name, end) = NameRef::read(self.buf, self.pos, compression)?;
        self.pos = end;
        Ok(name)
    }
}
