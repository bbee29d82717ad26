//! Signed download links: HMAC-SHA256 over the simulation, the file name and the expiry, with a
//! key kept in the data directory (so links survive a restart). A link works for that one file
//! until it expires; the check compares in constant time.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::io::Read;
use std::path::Path;

/// The key's length in bytes.
const KEY_BYTES: usize = 32;

/// Signs and checks links with one key.
#[derive(Clone)]
pub struct Signer {
    key: [u8; KEY_BYTES],
}

impl Signer {
    /// The key in `path`, made from the system's random source (readable by the owner only) the
    /// first time.
    pub fn load_or_create(path: &Path) -> std::io::Result<Signer> {
        if let Ok(bytes) = std::fs::read(path)
            && let Ok(key) = <[u8; KEY_BYTES]>::try_from(bytes.as_slice())
        {
            return Ok(Signer { key });
        }
        let mut key = [0u8; KEY_BYTES];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        let tmp = path.with_extension("tmp");
        write_private(&tmp, &key)?;
        std::fs::rename(&tmp, path)?;
        Ok(Signer { key })
    }

    /// A signer with a given key (tests).
    #[cfg(test)]
    pub fn with_key(key: [u8; KEY_BYTES]) -> Signer {
        Signer { key }
    }

    fn mac(&self, sim_id: i64, file: &str, expires: u64) -> Hmac<Sha256> {
        // Any key length is valid for HMAC.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(format!("{sim_id}\n{file}\n{expires}").as_bytes());
        mac
    }

    /// The signature of a link to `file` of simulation `sim_id`, valid until `expires` (Unix
    /// seconds), in lowercase hex.
    pub fn sign(&self, sim_id: i64, file: &str, expires: u64) -> String {
        hex(&self.mac(sim_id, file, expires).finalize().into_bytes())
    }

    /// Whether `signature` signs exactly this link and `now` is before `expires`.
    pub fn verify(&self, sim_id: i64, file: &str, expires: u64, signature: &str, now: u64) -> bool {
        let Some(bytes) = unhex(signature) else {
            return false;
        };
        // Checked even when expired, so timing says nothing about which check failed.
        let signed = self.mac(sim_id, file, expires).verify_slice(&bytes).is_ok();
        signed && now < expires
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_holds_for_its_file_until_it_expires() {
        let s = Signer::with_key([7; KEY_BYTES]);
        let sig = s.sign(3, "a.csv", 1000);
        assert_eq!(sig.len(), 64);
        assert!(s.verify(3, "a.csv", 1000, &sig, 999));
        assert!(!s.verify(3, "a.csv", 1000, &sig, 1000), "expired");
        assert!(!s.verify(3, "b.csv", 1000, &sig, 999), "another file");
        assert!(!s.verify(4, "a.csv", 1000, &sig, 999), "another simulation");
        assert!(!s.verify(3, "a.csv", 2000, &sig, 999), "a later expiry");
        assert!(!s.verify(3, "a.csv", 1000, &sig[..62], 999));
        assert!(!s.verify(3, "a.csv", 1000, "zz", 999));
        assert!(!s.verify(3, "a.csv", 1000, "é", 999));
        assert!(!Signer::with_key([8; KEY_BYTES]).verify(3, "a.csv", 1000, &sig, 999));
    }

    #[test]
    fn the_key_is_kept_across_loads() {
        let dir = std::env::temp_dir().join(format!("rdmasim-serve-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("key");
        let a = Signer::load_or_create(&path).unwrap();
        let b = Signer::load_or_create(&path).unwrap();
        assert_eq!(a.sign(1, "f", 2), b.sign(1, "f", 2));
        std::fs::remove_dir_all(&dir).ok();
    }
}
