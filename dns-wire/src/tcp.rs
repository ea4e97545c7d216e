//! DNS over TCP framing (RFC 1035 §4.2.2, RFC 7766 §8): each message is preceded by its
//! length as a 16-bit big-endian integer. Sans-IO: feed bytes in any chunking, take whole
//! messages out.

use alloc::vec::Vec;

use crate::error::{Error, ErrorKind, Result};

/// What [`decode_frame`] found at the start of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A whole message, and how many bytes (prefix included) it used.
    Complete {
        /// The message, without its length prefix.
        message: &'a [u8],
        /// Prefix plus message length.
        consumed: usize,
    },
    /// More bytes are needed: at least this many more.
    Partial {
        /// How many more bytes the next message needs at least.
        needed: usize,
    },
}

/// Looks for one length-prefixed message at the start of `buf`.
pub fn decode_frame(buf: &[u8]) -> Frame<'_> {
    let Some(&[hi, lo]) = buf.first_chunk::<2>() else {
        return Frame::Partial {
            needed: 2 - buf.len(),
        };
    };
    let consumed = 2 + usize::from(u16::from_be_bytes([hi, lo]));
    match buf.get(2..consumed) {
        Some(message) => Frame::Complete { message, consumed },
        None => Frame::Partial {
            needed: consumed - buf.len(),
        },
    }
}

/// Writes the 2-byte prefix for a `len`-byte message into `out[..2]`. Encode the message
/// into `out[2..]` first (its offsets stay relative to the message start), then call this.
pub fn write_prefix(out: &mut [u8], len: usize) -> Result<()> {
    let len = u16::try_from(len).map_err(|_| Error::new(ErrorKind::NoSpace, 0))?;
    let dst = out.get_mut(..2).ok_or(Error::new(ErrorKind::NoSpace, 0))?;
    dst.copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Writes `message` with its prefix into `out`; returns the bytes written.
pub fn encode_frame(message: &[u8], out: &mut [u8]) -> Result<usize> {
    let total = message.len() + 2;
    let room = out.len();
    let dst = out
        .get_mut(2..total)
        .ok_or(Error::new(ErrorKind::NoSpace, room))?;
    dst.copy_from_slice(message);
    write_prefix(out, message.len())?;
    Ok(total)
}

/// Reassembles messages from a TCP byte stream delivered in arbitrary chunks. Memory grows
/// only with the bytes actually pushed, never with a length the peer announces.
#[derive(Clone, Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    start: usize,
}

impl FrameDecoder {
    /// An empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, if the bytes pushed so far hold one.
    pub fn next_message(&mut self) -> Option<&[u8]> {
        let pending = self.buf.get(self.start..)?;
        match decode_frame(pending) {
            Frame::Complete { message, consumed } => {
                self.start += consumed;
                Some(message)
            }
            Frame::Partial { .. } => None,
        }
    }

    /// Bytes held that do not yet form a whole message.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1035_s4_2_2_messages_in_any_chunking() {
        let mut stream = Vec::new();
        let messages: [&[u8]; 3] = [b"first", b"", &[7; 300]];
        for m in messages {
            let mut framed = alloc::vec![0; m.len() + 2];
            encode_frame(m, &mut framed).unwrap();
            stream.extend_from_slice(&framed);
        }
        for chunk in [1, 2, 3, 7, 64, stream.len()] {
            let mut dec = FrameDecoder::new();
            let mut got = Vec::new();
            for piece in stream.chunks(chunk) {
                dec.push(piece);
                while let Some(m) = dec.next_message() {
                    got.push(m.to_vec());
                }
            }
            assert_eq!(got, messages.map(<[u8]>::to_vec), "chunk size {chunk}");
            assert_eq!(dec.pending(), 0);
        }
    }

    #[test]
    fn rfc7766_s8_partial_reports_what_is_missing() {
        assert_eq!(decode_frame(&[0]), Frame::Partial { needed: 1 });
        assert_eq!(decode_frame(&[0, 5, 1]), Frame::Partial { needed: 4 });
        assert_eq!(
            decode_frame(&[0, 1, 9, 8]),
            Frame::Complete {
                message: &[9],
                consumed: 3
            }
        );
    }

    #[test]
    fn a_huge_announced_length_allocates_nothing_up_front() {
        let mut dec = FrameDecoder::new();
        dec.push(&[0xFF, 0xFF, 1]);
        assert!(dec.next_message().is_none());
        assert_eq!(dec.pending(), 3);
    }
}
