//! The server loop: open documents, their snapshots (found as the macro finds them, reloaded
//! when the file changes), and the requests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, GotoDefinition, HoverRequest, Request as _,
};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, CompletionOptions, CompletionParams, CompletionResponse,
    DiagnosticSeverity, GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents,
    HoverParams, HoverProviderCapability, Location, MarkupContent, MarkupKind, OneOf, Position,
    PublishDiagnosticsParams, ServerCapabilities, TextDocumentPositionParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextEdit, Uri, WorkspaceEdit,
};

use super::ServerError;
use super::complete::complete;
use super::definition::locate;
use super::diagnose::{Problem, problems};
use super::document::{Document, FileKind};
use super::hover::hover;
use super::resolve::{self, Read};
use super::text::{path_uri, uri_path};
use qail_analyzer::rust_type::Features;
use qail_schema::Snapshot;
use qail_schema::snapshot;

/// What the server advertises.
pub(crate) fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "'".into(), ":".into()]),
            ..CompletionOptions::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

/// A snapshot file as loaded, with the modification time it was loaded at.
struct Loaded {
    mtime: Option<SystemTime>,
    snapshot: Result<Arc<Snapshot>, String>,
}

/// An open document.
struct Open {
    uri: Uri,
    doc: Document,
    /// The snapshot file it is checked against, or why there is none.
    snapshot: Result<PathBuf, String>,
    features: Features,
    problems: Vec<Problem>,
    /// The version the client gave the text.
    version: i32,
}

/// The server's state.
pub(crate) struct Server<'c> {
    conn: &'c Connection,
    /// `--snapshot`: one snapshot for every document.
    fixed: Option<PathBuf>,
    docs: HashMap<String, Open>,
    snapshots: HashMap<PathBuf, Loaded>,
}

impl<'c> Server<'c> {
    pub(crate) fn new(conn: &'c Connection, fixed: Option<PathBuf>) -> Server<'c> {
        Server {
            conn,
            fixed,
            docs: HashMap::new(),
            snapshots: HashMap::new(),
        }
    }

    /// Handles messages until the client shuts the server down.
    pub(crate) fn run(&mut self) -> Result<(), ServerError> {
        while let Ok(msg) = self.conn.receiver.recv() {
            self.reload_changed()?;
            match msg {
                Message::Request(req) => {
                    if self
                        .conn
                        .handle_shutdown(&req)
                        .map_err(ServerError::protocol)?
                    {
                        return Ok(());
                    }
                    self.request(req)?;
                }
                Message::Notification(n) => self.notification(n)?,
                Message::Response(_) => {}
            }
        }
        Ok(())
    }

    fn send(&self, msg: impl Into<Message>) -> Result<(), ServerError> {
        self.conn
            .sender
            .send(msg.into())
            .map_err(|e| ServerError(format!("the client went away: {e}")))
    }

    fn request(&mut self, req: Request) -> Result<(), ServerError> {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            Completion::METHOD => parse::<CompletionParams>(req).map(|p| {
                let at = p.text_document_position;
                to_value(self.completion(&at).map(CompletionResponse::Array))
            }),
            HoverRequest::METHOD => parse::<HoverParams>(req)
                .map(|p| to_value(self.hover(&p.text_document_position_params))),
            GotoDefinition::METHOD => parse::<GotoDefinitionParams>(req)
                .map(|p| to_value(self.definition(&p.text_document_position_params))),
            CodeActionRequest::METHOD => {
                parse::<CodeActionParams>(req).map(|p| to_value(self.code_actions(&p)))
            }
            other => Err(Response::new_err(
                id.clone(),
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("qail's language server does not handle {other}"),
            )),
        };
        let response = match result {
            Ok(value) => Response {
                id,
                result: Some(value),
                error: None,
            },
            Err(mut e) => {
                e.id = id;
                e
            }
        };
        self.send(response)
    }

    fn notification(&mut self, n: Notification) -> Result<(), ServerError> {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Some(p) = notification_params::<lsp_types::DidOpenTextDocumentParams>(n) else {
                    return Ok(());
                };
                let doc = p.text_document;
                self.open(doc.uri, doc.version, doc.text)?;
            }
            DidChangeTextDocument::METHOD => {
                let Some(p) = notification_params::<lsp_types::DidChangeTextDocumentParams>(n)
                else {
                    return Ok(());
                };
                // Full synchronization: the last change holds the whole text.
                if let Some(change) = p.content_changes.into_iter().last() {
                    self.open(p.text_document.uri, p.text_document.version, change.text)?;
                }
            }
            DidCloseTextDocument::METHOD => {
                let Some(p) = notification_params::<lsp_types::DidCloseTextDocumentParams>(n)
                else {
                    return Ok(());
                };
                self.docs.remove(p.text_document.uri.as_str());
            }
            _ => {}
        }
        Ok(())
    }

    /// Reads, analyzes and publishes the diagnostics of a document.
    fn open(&mut self, uri: Uri, version: i32, text: String) -> Result<(), ServerError> {
        let path = uri_path(&uri);
        let kind = match path.as_deref().and_then(Path::extension) {
            Some(e) if e == "rs" => FileKind::Rust,
            _ => FileKind::Sql,
        };
        let snapshot = self.snapshot_path(path.as_deref());
        let features = path
            .as_deref()
            .and_then(manifest)
            .map(|m| super::rust_type::of_manifest(&m))
            .unwrap_or_default();
        let open = Open {
            uri,
            doc: Document::new(kind, text),
            snapshot,
            features,
            problems: Vec::new(),
            version,
        };
        let key = open.uri.as_str().to_owned();
        self.docs.insert(key.clone(), open);
        self.analyze(&key)
    }

    /// Where the snapshot of the file at `path` is: `--snapshot`, else `QAIL_SCHEMA` or the
    /// nearest qail.schema.json from the file's crate (the directory of the nearest
    /// Cargo.toml, as the macro starts from `CARGO_MANIFEST_DIR`), else from its directory.
    fn snapshot_path(&self, path: Option<&Path>) -> Result<PathBuf, String> {
        if let Some(fixed) = &self.fixed {
            return Ok(fixed.clone());
        }
        let path = path.ok_or("the document is not a file: no snapshot to check it against")?;
        let dir = path.parent().unwrap_or(Path::new("/"));
        let start = manifest(path)
            .and_then(|m| m.parent().map(Path::to_owned))
            .unwrap_or_else(|| dir.to_owned());
        let env = std::env::var_os(snapshot::ENV_VAR);
        snapshot::discover(env.as_deref(), &start).map_err(|e| e.to_string())
    }

    /// The snapshot at `path`, loaded once per modification.
    fn load(&mut self, path: &Path) -> Result<Arc<Snapshot>, String> {
        if let Some(l) = self.snapshots.get(path) {
            return l.snapshot.clone();
        }
        let loaded = Loaded {
            mtime: mtime(path),
            snapshot: Snapshot::load(path)
                .map(Arc::new)
                .map_err(|e| e.to_string()),
        };
        let out = loaded.snapshot.clone();
        self.snapshots.insert(path.to_owned(), loaded);
        out
    }

    /// Reloads the snapshot files that changed since they were loaded, and re-checks the
    /// documents that use them.
    fn reload_changed(&mut self) -> Result<(), ServerError> {
        let changed: Vec<PathBuf> = self
            .snapshots
            .iter()
            .filter(|(p, l)| mtime(p) != l.mtime)
            .map(|(p, _)| p.clone())
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        for p in &changed {
            self.snapshots.remove(p);
        }
        let keys: Vec<String> = self
            .docs
            .iter()
            .filter(|(_, o)| o.snapshot.as_ref().is_ok_and(|p| changed.contains(p)))
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            self.analyze(&k)?;
        }
        Ok(())
    }

    fn analyze(&mut self, key: &str) -> Result<(), ServerError> {
        let Some(path) = self.docs.get(key).map(|o| o.snapshot.clone()) else {
            return Ok(());
        };
        let snap = path.and_then(|p| self.load(&p));
        let Some(open) = self.docs.get_mut(key) else {
            return Ok(());
        };
        open.problems = match &snap {
            Ok(snap) => {
                open.doc.analyze(snap);
                open.doc.regions.iter().flat_map(problems).collect()
            }
            Err(e) => open
                .doc
                .regions
                .first()
                .map(|r| Problem {
                    range: r.map[0]..r.map[0],
                    message: format!("qail: no schema snapshot to check the SQL against: {e}"),
                    fix: None,
                })
                .into_iter()
                .collect(),
        };
        let diagnostics = open
            .problems
            .iter()
            .map(|p| lsp_types::Diagnostic {
                range: open.doc.lines.range(&open.doc.text, &p.range),
                severity: Some(DiagnosticSeverity::ERROR),
                source: Some("qail".into()),
                message: p.message.clone(),
                ..lsp_types::Diagnostic::default()
            })
            .collect();
        let params = PublishDiagnosticsParams {
            uri: open.uri.clone(),
            diagnostics,
            version: Some(open.version),
        };
        self.send(Notification::new(
            PublishDiagnostics::METHOD.to_owned(),
            params,
        ))
    }

    /// The open document, its snapshot and the document offset of a position.
    fn at(&mut self, p: &TextDocumentPositionParams) -> Option<(&Open, Arc<Snapshot>, usize)> {
        let key = p.text_document.uri.as_str();
        let path = self.docs.get(key)?.snapshot.clone().ok()?;
        let snap = self.load(&path).ok()?;
        let open = self.docs.get(key)?;
        let offset = open.doc.lines.offset(&open.doc.text, p.position);
        Some((open, snap, offset))
    }

    fn completion(
        &mut self,
        p: &TextDocumentPositionParams,
    ) -> Option<Vec<lsp_types::CompletionItem>> {
        let (open, snap, offset) = self.at(p)?;
        let region = open.doc.region_at(offset)?;
        Some(complete(&snap, &region.sql, region.offset(offset)))
    }

    fn hover(&mut self, p: &TextDocumentPositionParams) -> Option<Hover> {
        let (open, snap, offset) = self.at(p)?;
        let region = open.doc.region_at(offset)?;
        let line = open.doc.lines.position(&open.doc.text, region.map[0]).line as usize + 1;
        let (text, range) = hover(&snap, &open.features, &region, region.offset(offset), line)?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: text,
            }),
            range: Some(
                open.doc
                    .lines
                    .range(&open.doc.text, &region.doc_range(&range)),
            ),
        })
    }

    fn definition(&mut self, p: &TextDocumentPositionParams) -> Option<GotoDefinitionResponse> {
        let (open, snap, offset) = self.at(p)?;
        let snapshot_path = open.snapshot.clone().ok()?;
        let region = open.doc.region_at(offset)?;
        let read = Read::new(&region.sql);
        let i = read.token_at(region.offset(offset))?;
        let target = resolve::target(&snap, &read, i)?;
        let (path, line) = locate(&snap, &snapshot_path, &target)?;
        let pos = Position::new(line, 0);
        Some(GotoDefinitionResponse::Scalar(Location {
            uri: path_uri(&std::path::absolute(&path).unwrap_or(path))?,
            range: lsp_types::Range::new(pos, pos),
        }))
    }

    fn code_actions(&self, p: &CodeActionParams) -> Option<Vec<CodeActionOrCommand>> {
        let open = self.docs.get(p.text_document.uri.as_str())?;
        let (doc, lines) = (&open.doc.text, &open.doc.lines);
        let wanted = lines.offset(doc, p.range.start)..lines.offset(doc, p.range.end);
        let actions = open
            .problems
            .iter()
            .filter(|pr| pr.range.start <= wanted.end && wanted.start <= pr.range.end)
            .filter_map(|pr| {
                let fix = pr.fix.as_ref()?;
                let edit = TextEdit {
                    range: lines.range(doc, &fix.range),
                    new_text: fix.text.clone(),
                };
                Some(CodeActionOrCommand::CodeAction(CodeAction {
                    title: fix.title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    edit: Some(WorkspaceEdit {
                        changes: Some(HashMap::from([(open.uri.clone(), vec![edit])])),
                        ..WorkspaceEdit::default()
                    }),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                }))
            })
            .collect();
        Some(actions)
    }
}

/// The nearest Cargo.toml above `path`.
fn manifest(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .map(|d| d.join("Cargo.toml"))
        .find(|m| m.is_file())
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn parse<P: serde::de::DeserializeOwned>(req: Request) -> Result<P, Response> {
    let id = req.id.clone();
    serde_json::from_value(req.params).map_err(|e| invalid(id, &e))
}

fn invalid(id: RequestId, e: &serde_json::Error) -> Response {
    Response::new_err(
        id,
        lsp_server::ErrorCode::InvalidParams as i32,
        format!("invalid parameters: {e}"),
    )
}

/// A notification's parameters; a malformed notification is reported on standard error and
/// skipped (a notification has no answer to carry the error).
fn notification_params<P: serde::de::DeserializeOwned>(n: Notification) -> Option<P> {
    serde_json::from_value(n.params)
        .map_err(|e| eprintln!("qail lsp: invalid {} notification skipped: {e}", n.method))
        .ok()
}

fn to_value<T: serde::Serialize>(v: T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
