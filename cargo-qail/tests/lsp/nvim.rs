//! A real editor: headless Neovim (Debian's 0.7, installed by scripts/ensure-neovim) with its
//! built-in LSP client attached to `cargo qail lsp`, asking for completion after `alias.` and
//! for hover on a LEFT-joined column in a `.rs` file.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::{position, project};

const SOURCE: &str = r#"fn harbors(id: i32) {
    let typing = qail!("SELECT s.name, h. FROM ships s LEFT JOIN harbors h ON h.id = s.harbor_id");
    let done = qail!("SELECT s.name, h.country FROM ships s LEFT JOIN harbors h ON h.id = s.harbor_id WHERE s.id = {id}");
}
"#;

const SCRIPT: &str = r#"
local results = {}
local function request(buf, method, line, character)
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = { line = line, character = character },
  }
  local answers, err = vim.lsp.buf_request_sync(buf, method, params, 10000)
  if not answers then return { error = tostring(err) } end
  for _, a in pairs(answers) do
    if a.error then return { error = a.error.message } end
    return a.result or vim.NIL
  end
  return { error = 'no answer' }
end
local function main()
  local id = vim.lsp.start_client({ name = 'qail', cmd = { BIN, 'lsp' }, root_dir = DIR })
  vim.cmd('edit ' .. vim.fn.fnameescape(FILE))
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, id)
  results.initialized = vim.wait(10000, function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized
  end, 20)
  local completion = request(buf, 'textDocument/completion', COMPLETE_LINE, COMPLETE_CHAR)
  local labels = {}
  for _, item in ipairs(completion.items or completion) do table.insert(labels, item.label) end
  results.completion = labels
  local hover = request(buf, 'textDocument/hover', HOVER_LINE, HOVER_CHAR)
  results.hover = hover.contents and hover.contents.value or vim.fn.json_encode(hover)
  vim.lsp.stop_client(id)
end
local ok, err = pcall(main)
if not ok then results.error = tostring(err) end
local f = io.open(OUT, 'w')
f:write(vim.fn.json_encode(results))
f:close()
vim.cmd('qall!')
"#;

fn lua_string(s: &str) -> String {
    format!("{s:?}")
}

#[test]
fn neovim_completes_after_an_alias_and_hovers_a_left_joined_column() {
    let version = Command::new("nvim").arg("--version").output();
    assert!(
        version.is_ok_and(|o| o.status.success()),
        "nvim is not installed: run scripts/ensure-neovim (scripts/test does)"
    );
    let dir = project("nvim");
    let file = dir.join("src/lib.rs");
    std::fs::write(&file, SOURCE).unwrap();
    let out = dir.join("nvim-results.json");
    let complete = position(SOURCE, SOURCE.find("h. FROM").unwrap() + 2);
    let hover = position(SOURCE, SOURCE.find("country").unwrap() + 2);
    let script = format!(
        "local BIN, DIR, FILE, OUT = {}, {}, {}, {}\nlocal COMPLETE_LINE, COMPLETE_CHAR = {}, {}\nlocal HOVER_LINE, HOVER_CHAR = {}, {}\n{SCRIPT}",
        lua_string(env!("CARGO_BIN_EXE_cargo-qail")),
        lua_string(dir.to_str().unwrap()),
        lua_string(file.to_str().unwrap()),
        lua_string(out.to_str().unwrap()),
        complete["line"],
        complete["character"],
        hover["line"],
        hover["character"],
    );
    let script_path = dir.join("script.lua");
    std::fs::write(&script_path, script).unwrap();
    let mut nvim = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script_path.display()))
        .current_dir(&dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("QAIL_SCHEMA")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("start nvim");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = nvim.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = nvim.kill();
            panic!("nvim did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "nvim exited with {status}");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(results.get("error"), None, "{results}");
    assert_eq!(results["initialized"], true, "{results}");
    assert_eq!(
        results["completion"],
        serde_json::json!(["id", "name", "country"]),
        "only the columns of harbors (h): {results}"
    );
    let hover = results["hover"].as_str().unwrap();
    assert!(
        hover.starts_with("**country**: `text`, nullable (right side of LEFT JOIN harbors AS h)"),
        "{hover}"
    );
    assert!(hover.contains("Rust: `Option<String>`"), "{hover}");
}
