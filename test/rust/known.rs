// The known heap in Rust, for t3012-rust.sh: each site allocates a known number of
// bytes through heapprof::Heapprof and keeps them; "ready", then it sleeps (gcore), or
// with HEAPPROF_AT_EXIT set, exits keeping them. Sizes: site_vec 3 x 1000, site_boxed 4 x 333
// (zeroed), shapes::site_string 2 x 700 (grown from 1 by push_str), site_aligned 3 x
// 100 at 256-byte alignment, site_thread 50 x 100 in another thread.
use std::alloc::{alloc, Layout};
use std::io::Write;

// std::hint::black_box is younger than Debian's rustc (1.63)
#[inline(never)]
fn black_box<T>(x: T) -> T {
    let y = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    y
}

#[global_allocator]
static A: heapprof::Heapprof = heapprof::Heapprof;

#[inline(never)]
fn site_vec(n: usize) -> Vec<u8> {
    black_box(Vec::with_capacity(n))
}

#[inline(never)]
fn site_boxed() -> Box<[u8; 333]> {
    black_box(Box::new([0u8; 333]))
}

mod shapes {
    #[inline(never)]
    pub fn site_string(n: usize) -> String {
        let mut s = String::new();
        while s.len() < n {
            s.push_str("x");
        }
        s.shrink_to_fit();
        super::black_box(s)
    }
}

#[inline(never)]
fn site_aligned() -> *mut u8 {
    black_box(unsafe { alloc(Layout::from_size_align(100, 256).unwrap()) })
}

#[inline(never)]
fn site_thread() -> Vec<Vec<u8>> {
    (0..50).map(|_| black_box(Vec::with_capacity(100))).collect::<Vec<_>>()
}

fn main() {
    let mut keep_vec = Vec::new();
    let mut keep_box = Vec::new();
    let mut keep_str = Vec::new();
    let mut keep_ptr = Vec::new();
    keep_vec.reserve_exact(16);
    keep_box.reserve_exact(16);
    keep_str.reserve_exact(16);
    keep_ptr.reserve_exact(16);
    for _ in 0..3 {
        keep_vec.push(site_vec(1000));
        keep_ptr.push(site_aligned() as usize);
    }
    for _ in 0..4 {
        keep_box.push(site_boxed());
    }
    for _ in 0..2 {
        keep_str.push(shapes::site_string(700));
    }
    let t = std::thread::spawn(|| {
        let v = site_thread();
        // the thread's Vec of Vecs moves out; its 50 blocks stay live in main
        v.into_iter().map(|b| b.as_ptr() as usize + b.capacity() * 0).count();
    });
    t.join().unwrap();
    let kept = std::thread::spawn(site_thread).join().unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    if std::env::var_os("HEAPPROF_AT_EXIT").is_some() {
        black_box((&keep_vec, &keep_box, &keep_str, &keep_ptr, &kept));
        std::process::exit(0); // no destructors: what is kept stays live at exit
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
        black_box((&keep_vec, &keep_box, &keep_str, &keep_ptr, &kept));
    }
}
