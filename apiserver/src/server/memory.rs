//! Keeping the heap returned to the system.
//!
//! glibc's allocator keeps memory freed by a burst (a large LIST served from
//! etcd decodes and encodes every object once) inside its arenas, so the
//! resident size of a server only ever grows to its historical peak. Servers
//! built on this crate therefore limit the allocator to a few arenas (fewer
//! half-empty heaps: tokio moves tasks between threads, so per-thread arenas
//! buy little) and ask it every few seconds to give free pages back
//! (`malloc_trim`, which releases whole free pages anywhere in the heap)
//! when more than 4 MiB lie free. Even an idle kube-core keeps about 23 MiB
//! free after building its OpenAPI documents and schemas at start, a third
//! of its resident size, which only a trim returns.
//! Other C libraries return memory on their own; there this does nothing.

use std::time::Duration;

/// How often free heap pages are handed back.
pub const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// Arenas glibc may create (its default is eight per core).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAX_ARENAS: libc::c_int = 4;

/// Limits the allocator's arenas; call before the runtime starts threads
/// that allocate (arenas already created stay).
pub fn configure_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts allocator parameters; M_ARENA_MAX with a
    // positive value is a documented, thread-safe setting.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MAX_ARENAS);
    }
}

/// Free heap bytes worth a trim: trimming walks the free chunks of each
/// arena under that arena's lock, so it is skipped when there is little to
/// return.
const TRIM_THRESHOLD: usize = 4 << 20;

/// Returns free heap pages to the system when the arenas hold more than
/// [`TRIM_THRESHOLD`] free bytes; whether it trimmed.
pub fn trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallinfo2 only reads allocator statistics; malloc_trim takes
    // the allocator's own locks and only releases pages no allocation uses.
    unsafe {
        if libc::mallinfo2().fordblks < TRIM_THRESHOLD {
            return false;
        }
        libc::malloc_trim(0);
        true
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Runs forever on a blocking thread: [`trim`] every [`TRIM_INTERVAL`].
pub async fn run_trimmer() {
    let mut tick = tokio::time::interval(TRIM_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if tokio::task::spawn_blocking(trim).await.is_err() {
            return;
        }
    }
}
