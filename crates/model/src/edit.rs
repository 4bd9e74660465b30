//! Editing a transcript without re-serialising what did not change.
//!
//! A [`Draft`] starts as "every message untouched". Rules remove, insert and move blocks and
//! messages, and set top-level keys. [`Draft::output`] then splices: unchanged bytes are copied
//! from the input; a message whose blocks changed gets a new content array made of its original
//! block slices (byte-identical) and the new blocks; separators and indentation between original
//! neighbours are copied too, so a diff of input and output shows only what changed.

use std::borrow::Cow;

use crate::behind::{ReadBehind, Sweep};
use crate::error::ModelError;
use crate::json::{Span, StrSpan, write_string};
use crate::read::read_block;
use crate::view::{Block, BlockKind, BodyKind, Content, Format, Role, Summary, Transcript};

/// A block that did not come from the input: its JSON text and its view (spans into `json`).
#[derive(Clone, Debug)]
pub struct NewBlock {
    /// The block's JSON text.
    pub json: String,
    /// The block's view, with spans relative to `json`.
    pub block: Block,
}

impl NewBlock {
    /// Reads `json` as one block of `format`.
    ///
    /// # Errors
    /// When `json` is not one valid block.
    pub fn new(format: Format, json: String) -> Result<NewBlock, ModelError> {
        let block = read_block(format, &json)?;
        Ok(NewBlock { json, block })
    }
}

/// One block of a draft message: an original block (by its index in [`Transcript::blocks`]) or
/// a new one.
#[derive(Clone, Debug)]
pub enum DraftBlock {
    /// Block `n` of the transcript's flat block list.
    Orig(u32),
    /// A block made by a repair.
    New(Box<NewBlock>),
}

/// One message of a draft.
#[derive(Clone, Debug)]
pub enum DraftMessage {
    /// Original message `idx`; `blocks` is `None` while its content is untouched.
    Orig {
        /// Index into [`Transcript::messages`].
        idx: u32,
        /// The new block list, once changed.
        blocks: Option<Vec<DraftBlock>>,
    },
    /// A message made by a repair.
    New {
        /// Its role.
        role: Role,
        /// Its blocks.
        blocks: Vec<DraftBlock>,
    },
}

/// A request-level edit: set (or remove, with `None`) a top-level key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopEdit {
    /// The key.
    pub key: String,
    /// The new JSON value, or `None` to remove the key.
    pub value: Option<String>,
}

/// A read-only view of one block in a draft: its source text and its view.
#[derive(Clone, Copy, Debug)]
pub struct BlockRef<'d> {
    /// The text the block's spans point into (the input, or a new block's own JSON).
    pub src: &'d str,
    /// The block.
    pub block: &'d Block,
    /// For an original block, its index in [`Transcript::blocks`].
    pub orig: Option<u32>,
}

impl<'d> BlockRef<'d> {
    /// The block's kind.
    pub fn kind(&self) -> BlockKind {
        self.block.kind()
    }
    /// The block's exact JSON text.
    pub fn raw(&self) -> &'d str {
        self.block.span.get(self.src)
    }
    /// The wire type name.
    pub fn type_name(&self) -> Cow<'d, str> {
        self.block.type_name(self.src)
    }
    /// Decodes a string field of this block.
    pub fn str(&self, f: Option<StrSpan>) -> Option<Cow<'d, str>> {
        f.map(|s| s.decode(self.src))
    }
    /// The call id (`tool_use.id`, ...).
    pub fn id(&self) -> Option<Cow<'d, str>> {
        self.str(self.block.id)
    }
    /// The id a result answers.
    pub fn tool_use_id(&self) -> Option<Cow<'d, str>> {
        self.str(self.block.tool_use_id)
    }
    /// The text (or thinking text).
    pub fn text(&self) -> Option<Cow<'d, str>> {
        self.str(self.block.text)
    }
    /// The signature.
    pub fn signature(&self) -> Option<Cow<'d, str>> {
        self.str(self.block.signature)
    }
    /// True for empty or whitespace-only text blocks.
    pub fn is_blank(&self) -> bool {
        self.block.is_blank(self.src)
    }
}

/// A transcript under repair. See the module docs.
#[derive(Clone, Debug)]
pub struct Draft<'t, 'a> {
    t: &'t Transcript<'a>,
    msgs: Vec<DraftMessage>,
    top: Vec<TopEdit>,
    changed: bool,
}

impl<'t, 'a> Draft<'t, 'a> {
    /// A draft with every message untouched.
    pub fn new(t: &'t Transcript<'a>) -> Self {
        let msgs = (0..t.messages.len() as u32)
            .map(|idx| DraftMessage::Orig { idx, blocks: None })
            .collect();
        Draft {
            t,
            msgs,
            top: Vec::new(),
            changed: false,
        }
    }

    /// The transcript the draft edits.
    pub fn transcript(&self) -> &'t Transcript<'a> {
        self.t
    }

    /// True once anything was changed.
    pub fn is_changed(&self) -> bool {
        self.changed
    }

    /// Number of messages now.
    #[inline]
    pub fn len(&self) -> usize {
        self.msgs.len()
    }

    /// True when there are no messages.
    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    /// The messages, as the draft holds them.
    pub fn messages(&self) -> &[DraftMessage] {
        &self.msgs
    }

    /// The request-level edits made so far.
    pub fn top_edits(&self) -> &[TopEdit] {
        &self.top
    }

    /// The role of message `i`.
    #[inline]
    pub fn role(&self, i: usize) -> Role {
        match self.msgs.get(i) {
            Some(DraftMessage::Orig { idx, .. }) => self.t.messages[*idx as usize].role,
            Some(DraftMessage::New { role, .. }) => *role,
            None => Role::Other,
        }
    }

    /// The original index of message `i`, if it came from the input.
    pub fn origin(&self, i: usize) -> Option<usize> {
        match self.msgs.get(i) {
            Some(DraftMessage::Orig { idx, .. }) => Some(*idx as usize),
            _ => None,
        }
    }

    /// The position of original message `orig` in the draft now, if it is still there.
    /// Linear in the number of messages; rules that need it per message build a map instead.
    pub fn position_of(&self, orig: usize) -> Option<usize> {
        self.msgs
            .iter()
            .position(|m| matches!(m, DraftMessage::Orig { idx, .. } if *idx as usize == orig))
    }

    /// True when message `i` has string content that was not turned into blocks.
    pub fn is_string_content(&self, i: usize) -> Option<StrSpan> {
        match self.msgs.get(i) {
            Some(DraftMessage::Orig { idx, blocks: None }) => {
                match self.t.messages[*idx as usize].content {
                    Content::String(s) => Some(s),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// True when message `i` has no content at all (no content key, or a non-array value).
    pub fn is_missing_content(&self, i: usize) -> bool {
        matches!(self.msgs.get(i), Some(DraftMessage::Orig { idx, blocks: None })
            if self.t.messages[*idx as usize].content == Content::Missing)
    }

    /// Number of blocks of message `i` (0 for string content).
    #[inline]
    pub fn block_count(&self, i: usize) -> usize {
        match self.msgs.get(i) {
            Some(DraftMessage::Orig { idx, blocks: None }) => self.t.blocks_of(*idx as usize).len(),
            Some(DraftMessage::Orig {
                blocks: Some(b), ..
            })
            | Some(DraftMessage::New { blocks: b, .. }) => b.len(),
            None => 0,
        }
    }

    fn resolve<'d>(&'d self, db: &'d DraftBlock) -> BlockRef<'d> {
        match db {
            DraftBlock::Orig(n) => BlockRef {
                src: self.t.src,
                block: &self.t.blocks[*n as usize],
                orig: Some(*n),
            },
            DraftBlock::New(nb) => BlockRef {
                src: &nb.json,
                block: &nb.block,
                orig: None,
            },
        }
    }

    /// Block `j` of message `i`.
    #[inline]
    pub fn block(&self, i: usize, j: usize) -> Option<BlockRef<'_>> {
        // A block of an untouched message (the common case) is found inline; one of an edited
        // or new message out of line.
        match self.msgs.get(i)? {
            DraftMessage::Orig { idx, blocks: None } => {
                let n = self.t.block_index(*idx as usize, j)?;
                Some(BlockRef {
                    src: self.t.src,
                    block: self.t.blocks.get(n)?,
                    orig: Some(n as u32),
                })
            }
            _ => self.block_of_edited(i, j),
        }
    }

    #[inline(never)]
    fn block_of_edited(&self, i: usize, j: usize) -> Option<BlockRef<'_>> {
        match self.msgs.get(i)? {
            DraftMessage::Orig {
                blocks: Some(b), ..
            }
            | DraftMessage::New { blocks: b, .. } => b.get(j).map(|db| self.resolve(db)),
            DraftMessage::Orig { blocks: None, .. } => None,
        }
    }

    /// The blocks of message `i`.
    #[inline]
    pub fn blocks(&self, i: usize) -> impl Iterator<Item = BlockRef<'_>> + '_ {
        // An untouched message walks its slice of the flat list directly; an edited one resolves
        // each draft block. One of the two iterators is always empty.
        let (orig, first, list): (&[Block], u32, &[DraftBlock]) = match self.msgs.get(i) {
            Some(DraftMessage::Orig { idx, blocks: None }) => {
                let idx = *idx as usize;
                let first = match self.t.messages[idx].content {
                    Content::Blocks { first, .. } => first,
                    _ => 0,
                };
                (self.t.blocks_of(idx), first, &[])
            }
            Some(DraftMessage::Orig {
                blocks: Some(b), ..
            })
            | Some(DraftMessage::New { blocks: b, .. }) => (&[], 0, b.as_slice()),
            None => (&[], 0, &[]),
        };
        let src = self.t.src;
        orig.iter()
            .zip(first..)
            .map(move |(block, n)| BlockRef {
                src,
                block,
                orig: Some(n),
            })
            .chain(list.iter().map(move |db| self.resolve(db)))
    }

    /// For each message of the output, the input message it is a byte-for-byte copy of (`None`
    /// for a new or edited message): what [`read_reusing`](crate::read_reusing) needs to read
    /// the output without scanning the untouched messages again.
    pub fn kept(&self) -> Vec<Option<u32>> {
        if self.t.body == BodyKind::Response {
            return vec![None; self.msgs.len()];
        }
        self.msgs
            .iter()
            .map(|m| match m {
                DraftMessage::Orig { idx, blocks: None } => Some(*idx),
                _ => None,
            })
            .collect()
    }

    /// For each message of the output, the input message it comes from, copied or edited
    /// (`None` for a new message): where a change to the whole message is, in the input's terms.
    pub fn derived(&self) -> Vec<Option<u32>> {
        self.msgs
            .iter()
            .map(|m| match m {
                DraftMessage::Orig { idx, .. } => Some(*idx),
                _ => None,
            })
            .collect()
    }

    /// For each message of the output whose block list a repair changed, the index each of its
    /// blocks had in the input message it comes from (`None` for a block made by the repair or
    /// brought from another message); `None` for a message copied whole or made new. With
    /// [`Draft::kept`], what a later pass's block path is in the input's terms.
    pub fn block_origins(&self) -> Vec<Option<Vec<Option<u32>>>> {
        self.msgs
            .iter()
            .map(|m| match m {
                DraftMessage::Orig {
                    idx,
                    blocks: Some(bs),
                } => {
                    let range = match self.t.messages.get(*idx as usize).map(|m| m.content) {
                        Some(Content::Blocks { first, len }) => first..first.saturating_add(len),
                        _ => 0..0,
                    };
                    Some(
                        bs.iter()
                            .map(|b| match b {
                                DraftBlock::Orig(n) if range.contains(n) => Some(n - range.start),
                                _ => None,
                            })
                            .collect(),
                    )
                }
                _ => None,
            })
            .collect()
    }

    /// What message `i`'s blocks hold: the reader's summary for an untouched message, worked
    /// out again for an edited or new one.
    #[inline]
    pub fn summary(&self, i: usize) -> Summary {
        // Rules ask this of every message, so the common answer (a message as the reader left
        // it) is kept small enough to inline; working one out again is out of line.
        match self.msgs.get(i) {
            Some(DraftMessage::Orig { idx, blocks: None }) => self
                .t
                .messages
                .get(*idx as usize)
                .map(|m| m.summary)
                .unwrap_or_default(),
            Some(_) => self.summary_of_edited(i),
            None => Summary::default(),
        }
    }

    #[inline(never)]
    fn summary_of_edited(&self, i: usize) -> Summary {
        Summary::of(self.blocks(i).map(|b| b.block))
    }

    /// The original location `(message, block)` of block `j` of message `i`, when it is an
    /// original block.
    pub fn block_origin(&self, i: usize, j: usize) -> Option<(usize, usize)> {
        let n = self.block(i, j)?.orig? as usize;
        self.t.locate_block(n)
    }

    /// Turns message `i`'s content into an editable block list (string content becomes one text
    /// block that keeps the string's exact bytes) and returns it.
    fn blocks_mut(&mut self, i: usize) -> Option<&mut Vec<DraftBlock>> {
        let t = self.t;
        self.changed = true;
        match self.msgs.get_mut(i)? {
            DraftMessage::Orig { idx, blocks } => {
                if blocks.is_none() {
                    let m = &t.messages[*idx as usize];
                    let list = match m.content {
                        Content::Blocks { first, len } => {
                            (first..first + len).map(DraftBlock::Orig).collect()
                        }
                        Content::String(s) if !s.span.is_empty() => {
                            // Keep the string's exact escaped bytes inside the new text block.
                            let json =
                                format!("{{\"type\":\"text\",\"text\":\"{}\"}}", s.raw(t.src));
                            match NewBlock::new(t.format, json) {
                                Ok(nb) => vec![DraftBlock::New(Box::new(nb))],
                                Err(_) => Vec::new(),
                            }
                        }
                        _ => Vec::new(),
                    };
                    *blocks = Some(list);
                }
                blocks.as_mut()
            }
            DraftMessage::New { blocks, .. } => Some(blocks),
        }
    }

    /// Removes block `j` of message `i` and returns it.
    pub fn remove_block(&mut self, i: usize, j: usize) -> Option<DraftBlock> {
        let b = self.blocks_mut(i)?;
        (j < b.len()).then(|| b.remove(j))
    }

    /// Inserts a block at position `j` of message `i` (clamped to the end).
    pub fn insert_block(&mut self, i: usize, j: usize, block: DraftBlock) {
        if let Some(b) = self.blocks_mut(i) {
            let j = j.min(b.len());
            b.insert(j, block);
        }
    }

    /// Replaces the block list of message `i`.
    pub fn set_blocks(&mut self, i: usize, list: Vec<DraftBlock>) {
        if let Some(b) = self.blocks_mut(i) {
            *b = list;
        }
    }

    /// The draft block list of message `i` (a copy), materialising string content.
    pub fn take_blocks(&mut self, i: usize) -> Vec<DraftBlock> {
        self.blocks_mut(i).map(std::mem::take).unwrap_or_default()
    }

    /// The handle of block `j` of message `i` (for moving it elsewhere).
    pub fn block_handle(&self, i: usize, j: usize) -> Option<DraftBlock> {
        match self.msgs.get(i)? {
            DraftMessage::Orig { idx, blocks: None } => self
                .t
                .block_index(*idx as usize, j)
                .map(|n| DraftBlock::Orig(n as u32)),
            DraftMessage::Orig {
                blocks: Some(b), ..
            }
            | DraftMessage::New { blocks: b, .. } => b.get(j).cloned(),
        }
    }

    /// Removes message `i`.
    pub fn remove_message(&mut self, i: usize) -> Option<DraftMessage> {
        self.changed = true;
        (i < self.msgs.len()).then(|| self.msgs.remove(i))
    }

    /// Inserts a new message at position `i` (clamped to the end).
    pub fn insert_message(&mut self, i: usize, role: Role, blocks: Vec<DraftBlock>) {
        self.changed = true;
        let i = i.min(self.msgs.len());
        self.msgs.insert(i, DraftMessage::New { role, blocks });
    }

    /// Sets (or with `None` removes) a top-level key of the body.
    pub fn set_top(&mut self, key: &str, value: Option<String>) {
        self.changed = true;
        if let Some(e) = self.top.iter_mut().find(|e| e.key == key) {
            e.value = value;
        } else {
            self.top.push(TopEdit {
                key: key.to_owned(),
                value,
            });
        }
    }

    /// The output text: the input itself when nothing changed. Otherwise a new string, written
    /// by [`Draft::output_into`].
    pub fn output(&self) -> Cow<'a, str> {
        if !self.changed {
            return Cow::Borrowed(self.t.src);
        }
        let mut out = String::new();
        self.output_into(&mut out);
        Cow::Owned(out)
    }

    /// Writes the output text into `out`, replacing what it held and reusing its allocation;
    /// returns true. When nothing changed, the input itself is the output: `out` is left empty
    /// and the result is false (no copy is made).
    ///
    /// The text is written in one forward pass: each unchanged byte range of the input is copied
    /// once, straight into `out`, and each edited piece (a rebuilt content array, a new message,
    /// a top-level key) is written in place between them, so nothing but `out` holds a copy of
    /// the body.
    pub fn output_into(&self, out: &mut String) -> bool {
        self.output_into_behind(out, None)
    }

    /// [`Draft::output_into`], telling `behind` how far into the input the writing has gone
    /// (see [`ReadBehind`]): a caller holding the input in pages it can let go of keeps only
    /// what is still ahead resident while the new body grows.
    pub fn output_into_behind(&self, out: &mut String, behind: Option<&dyn ReadBehind>) -> bool {
        out.clear();
        if !self.changed {
            return false;
        }
        let t = self.t;
        let src = t.src;
        // The edits, each with the input range it replaces, in the order they appear.
        let mut edits: Vec<(Span, Edit<'_>)> = Vec::new();
        let identity_order =
            self.msgs.len() == t.messages.len()
                && self.msgs.iter().enumerate().all(
                    |(i, m)| matches!(m, DraftMessage::Orig { idx, .. } if *idx as usize == i),
                );
        if identity_order || t.body == BodyKind::Response {
            for m in &self.msgs {
                if let DraftMessage::Orig {
                    idx,
                    blocks: Some(list),
                } = m
                {
                    let anchor = msg_content_anchor(t, *idx as usize);
                    let span = match anchor {
                        Anchor::Value(span) => span,
                        Anchor::Insert(at) => Span::new(at, at),
                    };
                    edits.push((span, Edit::Content(anchor, list, *idx)));
                }
            }
        } else if let Some(arr) = t.messages_span {
            edits.push((arr, Edit::Messages(arr)));
        }
        for e in &self.top {
            let (span, text) = self.top_splice(e);
            edits.push((span, Edit::Text(text)));
        }
        // Stable: a top-level insertion and a content edit never share a start, and two
        // insertions at one place keep the order they were made in.
        edits.sort_by_key(|(s, _)| (s.start, s.end));
        out.reserve(src.len() + 256);
        let sweep = Sweep::begin(behind);
        let mut pos = 0usize;
        for (span, edit) in edits {
            let start = span.start as usize;
            if start < pos {
                continue; // overlapping edits are a bug upstream; keep the first.
            }
            out.push_str(&src[pos..start]);
            match edit {
                Edit::Content(anchor, list, idx) => {
                    self.write_content(out, anchor, list, &t.messages[idx as usize])
                }
                Edit::Messages(arr) => self.write_messages_array(out, arr, &sweep),
                Edit::Text(text) => out.push_str(&text),
            }
            pos = span.end as usize;
            sweep.past(pos);
        }
        out.push_str(&src[pos..]);
        sweep.past(src.len());
        true
    }

    /// Writes a message's new content in place of `anchor`: over the existing value, or as a
    /// new member before the message's closing brace.
    fn write_content(
        &self,
        out: &mut String,
        anchor: Anchor,
        list: &[DraftBlock],
        msg: &crate::view::Message,
    ) {
        match anchor {
            Anchor::Value(span) => {
                let arr = match msg.content {
                    Content::Blocks { .. } => Some(span),
                    _ => None,
                };
                self.write_block_array(out, arr, list);
            }
            Anchor::Insert(_) => {
                out.push_str(match self.t.format {
                    Format::Gemini | Format::Opencode => ",\"parts\":",
                    // The other formats are never drafted; Anthropic's key is the neutral one.
                    _ => ",\"content\":",
                });
                self.write_block_array(out, None, list);
            }
        }
    }

    /// Writes a content array for `list`, reusing the original array's whitespace and the
    /// separators between blocks that were neighbours in the input.
    fn write_block_array(&self, out: &mut String, orig: Option<Span>, list: &[DraftBlock]) {
        let src = self.t.src;
        let blocks = &self.t.blocks;
        out.push('[');
        if list.is_empty() {
            out.push(']');
            return;
        }
        let (lead, trail, default_sep) = array_layout(
            src,
            orig,
            list.iter()
                .find_map(|b| match b {
                    DraftBlock::Orig(n) => Some(*n),
                    _ => None,
                })
                .map(|n| blocks_around(self.t, n)),
        );
        out.push_str(lead);
        let mut prev: Option<(u32, Span)> = None;
        for (k, b) in list.iter().enumerate() {
            let cur = match b {
                DraftBlock::Orig(n) => Some((*n, blocks[*n as usize].span)),
                DraftBlock::New(_) => None,
            };
            if k > 0 {
                match (prev, cur) {
                    // Neighbours in the same input message: keep the separator between them.
                    // Consecutive flat indices may belong to two messages; their gap is not a
                    // separator.
                    (Some((a, sa)), Some((b2, sb)))
                        if b2 == a + 1
                            && blocks[a as usize].msg == blocks[b2 as usize].msg
                            && sa.end <= sb.start =>
                    {
                        out.push_str(&src[sa.end as usize..sb.start as usize]);
                    }
                    _ => out.push_str(default_sep),
                }
            }
            match b {
                DraftBlock::Orig(n) => out.push_str(blocks[*n as usize].span.get(src)),
                DraftBlock::New(nb) => out.push_str(&nb.json),
            }
            prev = cur;
        }
        out.push_str(trail);
        out.push(']');
    }

    /// Writes the whole messages array (messages were removed, inserted or moved): untouched
    /// messages as their input bytes, with the input's separators between input neighbours.
    fn write_messages_array(&self, out: &mut String, arr: Span, sweep: &Sweep<'_>) {
        let t = self.t;
        let src = t.src;
        let has_orig = self
            .msgs
            .iter()
            .any(|m| matches!(m, DraftMessage::Orig { .. }));
        let (lead, trail, default_sep) = array_layout(
            src,
            Some(arr),
            has_orig.then(|| {
                (
                    t.messages.first().map(|m| m.span),
                    t.messages.get(1).map(|m| m.span),
                    t.messages.last().map(|m| m.span),
                )
            }),
        );
        out.push('[');
        if self.msgs.is_empty() {
            out.push(']');
            return;
        }
        out.push_str(lead);
        let mut prev: Option<u32> = None;
        for (k, m) in self.msgs.iter().enumerate() {
            let cur = match m {
                DraftMessage::Orig { idx, .. } => Some(*idx),
                DraftMessage::New { .. } => None,
            };
            if k > 0 {
                match (prev, cur) {
                    (Some(a), Some(b)) if b == a + 1 => {
                        let sa = t.messages[a as usize].span;
                        let sb = t.messages[b as usize].span;
                        out.push_str(&src[sa.end as usize..sb.start as usize]);
                    }
                    _ => out.push_str(default_sep),
                }
            }
            match m {
                DraftMessage::Orig { idx, blocks: None } => {
                    out.push_str(t.messages[*idx as usize].span.get(src))
                }
                DraftMessage::Orig {
                    idx,
                    blocks: Some(list),
                } => {
                    let msg = &t.messages[*idx as usize];
                    let anchor = msg_content_anchor(t, *idx as usize);
                    let (from, to) = match anchor {
                        Anchor::Value(span) => (span.start as usize, span.end as usize),
                        Anchor::Insert(at) => (at, at),
                    };
                    out.push_str(&src[msg.span.start as usize..from]);
                    self.write_content(out, anchor, list, msg);
                    out.push_str(&src[to..msg.span.end as usize]);
                }
                DraftMessage::New { role, blocks } => self.write_new_message(out, *role, blocks),
            }
            if let Some(i) = cur {
                sweep.past(t.messages[i as usize].span.end as usize);
            }
            prev = cur;
        }
        out.push_str(trail);
        out.push(']');
    }

    fn write_new_message(&self, out: &mut String, role: Role, blocks: &[DraftBlock]) {
        let (open, key) = match self.t.format {
            Format::Gemini => ("{\"role\":\"", "\",\"parts\":"),
            Format::Opencode => ("{\"info\":{\"role\":\"", "\"},\"parts\":"),
            // Anthropic, and the formats that are never drafted.
            _ => ("{\"role\":\"", "\",\"content\":"),
        };
        out.push_str(open);
        out.push_str(role_name(role, self.t.format == Format::Gemini));
        out.push_str(key);
        self.write_block_array(out, None, blocks);
        out.push('}');
    }

    fn top_splice(&self, e: &TopEdit) -> (Span, String) {
        let t = self.t;
        let src = t.src;
        let found = t
            .meta
            .top_keys
            .iter()
            .rev()
            .find(|(k, _)| k.decode(src) == e.key);
        match (found, &e.value) {
            (Some((_, v)), Some(val)) => (*v, val.clone()),
            (Some((k, v)), None) => {
                // Remove `"key": value` and one adjacent comma.
                let start = k.span.start as usize - 1;
                let mut end = v.end as usize;
                let after = &src[end..];
                let ws_after = after.len() - after.trim_start().len();
                if after.trim_start().starts_with(',') {
                    end += ws_after + 1;
                    let rest = &src[end..];
                    end += rest.len() - rest.trim_start_matches([' ', '\n', '\r', '\t']).len();
                    (Span::new(start, end), String::new())
                } else {
                    let before = &src[..start];
                    let trimmed = before.trim_end();
                    if trimmed.ends_with(',') {
                        (Span::new(trimmed.len() - 1, end), String::new())
                    } else {
                        (Span::new(start, end), String::new())
                    }
                }
            }
            (None, Some(val)) => {
                let at = t.root.start as usize + 1;
                let mut text = String::new();
                write_string(&mut text, &e.key);
                text.push(':');
                text.push_str(val);
                if !t.meta.top_keys.is_empty() {
                    text.push(',');
                }
                (Span::new(at, at), text)
            }
            (None, None) => (
                Span::new(t.root.start as usize + 1, t.root.start as usize + 1),
                String::new(),
            ),
        }
    }
}

fn role_name(role: Role, gemini: bool) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant if gemini => "model",
        Role::Assistant => "assistant",
        Role::System => "system",
        Role::Other => "user",
    }
}

/// Where a message's new content goes: over the existing value, or inserted before the
/// message's closing brace.
#[derive(Clone, Copy)]
enum Anchor {
    Value(Span),
    Insert(usize),
}

/// One edited piece of the output, written by [`Draft::output_into`] in place of a range of the
/// input.
enum Edit<'d> {
    /// Message `idx`'s new content.
    Content(Anchor, &'d [DraftBlock], u32),
    /// The whole messages array.
    Messages(Span),
    /// A top-level key's new text.
    Text(String),
}

fn msg_content_anchor(t: &Transcript<'_>, i: usize) -> Anchor {
    let m = &t.messages[i];
    match m.content_span {
        Some(s) => Anchor::Value(s),
        None => Anchor::Insert(m.span.end as usize - 1),
    }
}

/// The first, second and last item spans of the original array a block list comes from.
fn blocks_around(t: &Transcript<'_>, n: u32) -> (Option<Span>, Option<Span>, Option<Span>) {
    let Some((i, _)) = t.locate_block(n as usize) else {
        return (None, None, None);
    };
    let bl = t.blocks_of(i);
    (
        bl.first().map(|b| b.span),
        bl.get(1).map(|b| b.span),
        bl.last().map(|b| b.span),
    )
}

/// The leading whitespace, trailing whitespace and separator to use for a rebuilt array.
fn array_layout(
    src: &str,
    arr: Option<Span>,
    items: Option<(Option<Span>, Option<Span>, Option<Span>)>,
) -> (&str, &str, &str) {
    let (Some(arr), Some((Some(first), second, Some(last)))) = (arr, items) else {
        return ("", "", ",");
    };
    if first.start < arr.start || last.end > arr.end {
        return ("", "", ",");
    }
    let lead = src
        .get(arr.start as usize + 1..first.start as usize)
        .unwrap_or("");
    let trail = src
        .get(last.end as usize..arr.end as usize - 1)
        .unwrap_or("");
    let sep = second
        .and_then(|s| src.get(first.end as usize..s.start as usize))
        .unwrap_or(",");
    (lead, trail, sep)
}

impl Transcript<'_> {
    /// The `(message, block)` location of block `n` of the flat block list.
    pub fn locate_block(&self, n: usize) -> Option<(usize, usize)> {
        self.blocks.get(n).map(|b| (b.msg as usize, b.pos as usize))
    }
}

/// Object-level edits on one JSON object's text (a block), keeping every other member's bytes.
pub mod object {
    use crate::json::{Scanner, Span, StrSpan, write_string};

    /// The members of the object `src`: `(key, member span from the key's quote to the value's
    /// end, value span)`. `None` when `src` is not a JSON object.
    pub fn members(src: &str) -> Option<Vec<(StrSpan, Span, Span)>> {
        let mut s = Scanner::new(src).ok()?;
        let mut out = Vec::new();
        s.object(|s, key| -> crate::json::Result<()> {
            let v = s.skip_value()?;
            out.push((
                key,
                Span::new(key.span.start as usize - 1, v.end as usize),
                v,
            ));
            Ok(())
        })
        .ok()?;
        s.finish().ok()?;
        Some(out)
    }

    /// `src` without the member `key` (all occurrences, the key compared decoded), with the
    /// comma that separated it. Every other byte is kept: the members left, and the whitespace
    /// and comma before each of them. `None` when `src` is not an object.
    pub fn remove_key(src: &str, key: &str) -> Option<String> {
        let members = members(src)?;
        let (Some(first), Some(last)) = (members.first(), members.last()) else {
            return Some(src.to_owned());
        };
        if members.iter().all(|(k, _, _)| k.decode(src) != key) {
            return Some(src.to_owned());
        }
        let mut out = String::with_capacity(src.len());
        out.push_str(&src[..first.1.start as usize]);
        let mut wrote = false;
        let mut prev_end = first.1.start as usize;
        for (k, m, _) in &members {
            // The separator this member had: a comma and whatever whitespace was there.
            let separator = &src[prev_end..m.start as usize];
            prev_end = m.end as usize;
            if k.decode(src) == key {
                continue;
            }
            if wrote {
                out.push_str(separator);
            }
            out.push_str(m.get(src));
            wrote = true;
        }
        out.push_str(&src[last.1.end as usize..]);
        Some(out)
    }

    /// `src` with member `key` set to the JSON text `value`: replaced in place when present,
    /// appended at the end otherwise. `None` when `src` is not an object.
    pub fn set_key(src: &str, key: &str, value: &str) -> Option<String> {
        let members = members(src)?;
        if let Some((_, _, v)) = members.iter().rev().find(|(k, _, _)| k.decode(src) == key) {
            let mut out = String::with_capacity(src.len() + value.len());
            out.push_str(&src[..v.start as usize]);
            out.push_str(value);
            out.push_str(&src[v.end as usize..]);
            return Some(out);
        }
        let close = src.rfind('}')?;
        let mut out = String::with_capacity(src.len() + key.len() + value.len() + 4);
        match members.last() {
            Some((_, m, _)) => {
                out.push_str(&src[..m.end as usize]);
                out.push(',');
                write_string(&mut out, key);
                out.push(':');
                out.push_str(value);
                out.push_str(&src[m.end as usize..]);
            }
            None => {
                out.push_str(&src[..close]);
                write_string(&mut out, key);
                out.push(':');
                out.push_str(value);
                out.push_str(&src[close..]);
            }
        }
        Some(out)
    }

    /// The raw value text of member `key`, if present.
    pub fn get<'s>(src: &'s str, key: &str) -> Option<&'s str> {
        members(src)?
            .iter()
            .rev()
            .find(|(k, _, _)| k.decode(src) == key)
            .map(|(_, _, v)| v.get(src))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn remove_and_set_keep_other_bytes() {
            let b =
                r#"{ "type": "text", "text": "a\u00e9",  "cache_control": {"type":"ephemeral"} }"#;
            assert_eq!(
                remove_key(b, "cache_control").as_deref(),
                Some(r#"{ "type": "text", "text": "a\u00e9" }"#)
            );
            assert_eq!(remove_key(b, "nope").as_deref(), Some(b));
            assert_eq!(
                set_key(b, "text", "\"z\"").as_deref(),
                Some(r#"{ "type": "text", "text": "z",  "cache_control": {"type":"ephemeral"} }"#)
            );
            assert_eq!(set_key("{}", "a", "1").as_deref(), Some(r#"{"a":1}"#));
            assert_eq!(
                set_key(r#"{"x":2}"#, "a", "1").as_deref(),
                Some(r#"{"x":2,"a":1}"#)
            );
            assert_eq!(get(b, "type"), Some("\"text\""));
            assert!(members("[1]").is_none());
        }

        fn check_remove(src: &str, expect: &str) {
            assert_eq!(remove_key(src, "k").as_deref(), Some(expect), "from {src}");
        }

        #[test]
        fn remove_keeps_every_other_separator() {
            check_remove(r#"{"k":1}"#, "{}");
            check_remove(r#"{ "k" : 1 }"#, "{  }");
            check_remove(r#"{"k":1, "a":2 ,"b":3}"#, r#"{"a":2 ,"b":3}"#);
            check_remove(r#"{"a":2 ,"k":1,  "b":3}"#, r#"{"a":2,  "b":3}"#);
            check_remove("{\"a\":2 , \"b\":3,\"k\"\r:1 }", r#"{"a":2 , "b":3 }"#);
            check_remove(r#"{"\u006b":1,"a":{"k":0},"k":2}"#, r#"{"a":{"k":0}}"#);
        }
    }
}
