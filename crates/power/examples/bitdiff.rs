//! Compares two `bitcheck` outputs number by number: integers must be identical,
//! floats equal within a relative tolerance (default 1e-9), the text around them
//! identical. Prints the largest relative difference and where it is.
//! cargo run --release -p ssdsim-power --example bitcheck > before.txt
//! (change the model, then the same into after.txt)
//! cargo run --release -p ssdsim-power --example bitdiff -- before.txt after.txt [tol]
use std::process::ExitCode;

/// Splits a line into its text (numbers replaced by `#`) and its numbers.
fn tokens(line: &str) -> (String, Vec<&str>) {
    let (mut text, mut nums) = (String::new(), Vec::new());
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts_num =
            b[i].is_ascii_digit() || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        // A digit inside a word (e.g. `x1`) is text.
        let in_word = i > 0 && (b[i - 1].is_ascii_alphabetic() || b[i - 1] == b'_');
        if starts_num && !in_word {
            let j0 = i;
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_digit()
                    || b[i] == b'.'
                    || b[i] == b'e'
                    || b[i] == b'E'
                    || ((b[i] == b'-' || b[i] == b'+') && matches!(b[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
            nums.push(&line[j0..i]);
            text.push('#');
        } else {
            text.push(b[i] as char);
            i += 1;
        }
    }
    (text, nums)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: bitdiff BEFORE AFTER [relative tolerance, default 1e-9]");
        return ExitCode::from(2);
    }
    let tol: f64 = match args.get(2).map(|t| t.parse()) {
        None => 1e-9,
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            eprintln!("tolerance {:?}: {e}", args[2]);
            return ExitCode::from(2);
        }
    };
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let (a, b) = match (read(&args[0]), read(&args[1])) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut bad = 0usize;
    if la.len() != lb.len() {
        eprintln!("line counts differ: {} vs {}", la.len(), lb.len());
        bad += 1;
    }
    let (mut n_int, mut n_float, mut max_rel) = (0usize, 0usize, 0.0f64);
    let mut worst = String::new();
    for (n, (x, y)) in la.iter().zip(&lb).enumerate() {
        let ((tx, nx), (ty, ny)) = (tokens(x), tokens(y));
        if tx != ty || nx.len() != ny.len() {
            eprintln!("line {}: text differs", n + 1);
            bad += 1;
            continue;
        }
        for (u, v) in nx.iter().zip(&ny) {
            let is_int = |s: &str| !s.contains(['.', 'e', 'E']);
            if is_int(u) && is_int(v) {
                n_int += 1;
                if u != v {
                    eprintln!("line {}: integer {u} vs {v}", n + 1);
                    bad += 1;
                }
                continue;
            }
            n_float += 1;
            let (fu, fv): (f64, f64) =
                (u.parse().unwrap_or(f64::NAN), v.parse().unwrap_or(f64::NAN));
            if fu == fv {
                continue;
            }
            let rel = (fu - fv).abs() / fu.abs().max(fv.abs());
            if rel.is_nan() || rel > tol {
                eprintln!("line {}: {u} vs {v} (relative {rel:e})", n + 1);
                bad += 1;
            }
            if rel > max_rel || rel.is_nan() {
                max_rel = rel;
                worst = format!("line {}: {u} vs {v}", n + 1);
            }
        }
    }
    println!(
        "{} lines, {n_int} integers, {n_float} floats; max relative difference {max_rel:e} ({worst}); {bad} differences beyond {tol:e}",
        la.len()
    );
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
