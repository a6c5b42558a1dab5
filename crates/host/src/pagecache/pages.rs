//! The cache's pages: the LRU list, reclaim, the dirty lists of each
//! inode and the page-to-file map (`address_space`).

use super::*;

impl<S: AppSource> PageCache<S> {
    pub(super) fn lru_unlink(&mut self, i: u32) {
        let (p, n) = (self.pages[i as usize].prev, self.pages[i as usize].next);
        if p == NONE {
            self.lru_head = n;
        } else {
            self.pages[p as usize].next = n;
        }
        if n == NONE {
            self.lru_tail = p;
        } else {
            self.pages[n as usize].prev = p;
        }
    }
    pub(super) fn lru_push_head(&mut self, i: u32) {
        let h = self.lru_head;
        self.pages[i as usize].prev = NONE;
        self.pages[i as usize].next = h;
        if h == NONE {
            self.lru_tail = i;
        } else {
            self.pages[h as usize].prev = i;
        }
        self.lru_head = i;
    }
    pub(super) fn touch(&mut self, i: u32) {
        if self.lru_head != i {
            self.lru_unlink(i);
            self.lru_push_head(i);
        }
    }

    /// Evict the least recently used clean idle page; pages that cannot go
    /// are rotated to the head. False if a whole pass found none.
    pub(super) fn evict_one(&mut self) -> bool {
        let mut left = self.map.len();
        while left > 0 {
            let i = self.lru_tail;
            let p = self.pages[i as usize];
            if p.flags & (DIRTY | WRITEBACK | LOCKED) == 0 && p.io == NONE {
                self.remove_page(i);
                self.stats.evictions += 1;
                return true;
            }
            self.touch(i);
            left -= 1;
        }
        false
    }

    /// The page of `lpn`, inserted (empty) if absent; None if the cache is
    /// full of pages that cannot be evicted.
    pub(super) fn get_or_insert(&mut self, lpn: u64, ino: u32) -> Option<u32> {
        if let Some(&i) = self.map.get(&lpn) {
            return Some(i);
        }
        if self.map.len() as u64 >= self.cap && !self.evict_one() {
            return None;
        }
        let page = Page {
            lpn,
            ino,
            flags: 0,
            io: NONE,
            prev: NONE,
            next: NONE,
            fprev: NONE,
            fnext: NONE,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.pages[i as usize] = page;
                i
            }
            None => {
                self.pages.push(page);
                (self.pages.len() - 1) as u32
            }
        };
        self.map.insert(lpn, i);
        self.lru_push_head(i);
        self.page_joins(i);
        Some(i)
    }

    /// Page `i` leaves the cache (its file's list too).
    pub(super) fn remove_page(&mut self, i: u32) {
        self.map.remove(&self.pages[i as usize].lpn);
        self.lru_unlink(i);
        self.page_leaves(i);
        self.free.push(i);
    }
    /// Page `i` joins the list of its file (`ino`; the block device and
    /// the metadata keep none).
    pub(super) fn page_joins(&mut self, i: u32) {
        let ino = self.pages[i as usize].ino;
        if !self.is_file(ino) {
            return;
        }
        let node = self.inodes.entry(ino).or_default();
        let first = std::mem::replace(&mut node.first, i);
        let p = &mut self.pages[i as usize];
        (p.fprev, p.fnext) = (NONE, first);
        if first != NONE {
            self.pages[first as usize].fprev = i;
        }
    }
    /// Page `i` leaves the list of its file.
    pub(super) fn page_leaves(&mut self, i: u32) {
        let p = self.pages[i as usize];
        if !self.is_file(p.ino) {
            return;
        }
        if p.fprev == NONE {
            if let Some(n) = self.inodes.get_mut(&p.ino) {
                n.first = p.fnext;
            }
        } else {
            self.pages[p.fprev as usize].fnext = p.fnext;
        }
        if p.fnext != NONE {
            self.pages[p.fnext as usize].fprev = p.fprev;
        }
    }

    /// Dirty page `i` for file `ino` (`__mark_inode_dirty`: a file that was
    /// clean is queued on `b_dirty` now, and the flusher's periodic wakeup
    /// is armed if it was not).
    pub(super) fn set_dirty(&mut self, i: u32, ino: u32) {
        let p = &mut self.pages[i as usize];
        if p.flags & DIRTY != 0 && p.ino == ino {
            return;
        }
        if p.flags & DIRTY != 0 {
            // Another file's dirty page (a slot reused after a delete whose
            // trim did not cover it): it changes hands.
            self.clear_dirty(i);
        }
        if self.pages[i as usize].ino != ino {
            // Written by another file than the one that brought it in:
            // the page is the writer's now.
            self.page_leaves(i);
            self.pages[i as usize].ino = ino;
            self.page_joins(i);
        }
        let p = &mut self.pages[i as usize];
        p.flags |= DIRTY;
        let lpn = p.lpn;
        let now = self.now;
        let period = self.period();
        let node = self.inodes.entry(ino).or_default();
        if node.dirty.is_empty() {
            node.dirtied_when = now;
            self.b_dirty.insert((now, ino));
            if self.next_periodic.is_none() && self.cfg.dirty_writeback_centisecs > 0 {
                self.next_periodic = Some(now + period);
            }
        }
        node.dirty.insert(lpn);
        self.nr_dirty += 1;
        self.stats.dirty_max = self.stats.dirty_max.max(self.nr_dirty);
    }
    pub(super) fn clear_dirty(&mut self, i: u32) {
        let p = &mut self.pages[i as usize];
        if p.flags & DIRTY == 0 {
            return;
        }
        p.flags &= !DIRTY;
        let (lpn, ino) = (p.lpn, p.ino);
        self.nr_dirty -= 1;
        let node = self
            .inodes
            .get_mut(&ino)
            .expect("a dirty page's file is known");
        node.dirty.remove(&lpn);
        if node.dirty.is_empty() {
            self.b_dirty.remove(&(node.dirtied_when, ino));
        }
    }

    pub(super) fn period(&self) -> Dur {
        Dur(self.cfg.dirty_writeback_centisecs as u64 * 10_000_000)
    }
    pub(super) fn expire(&self) -> Dur {
        Dur(self.cfg.dirty_expire_centisecs as u64 * 10_000_000)
    }

    /// The file whose data device page `lpn` last held (0: none known).
    pub(super) fn owner(&self, lpn: u64) -> u32 {
        self.owners.get(lpn as usize).copied().unwrap_or(0)
    }
    pub(super) fn set_owner(&mut self, lpn: u64, ino: u32) {
        if self.owners.is_empty() {
            // Allocated on the first file write: block-level runs never do.
            self.owners = vec![0; self.dev_pages as usize];
        }
        if let Some(o) = self.owners.get_mut(lpn as usize) {
            *o = ino;
        }
    }
}
