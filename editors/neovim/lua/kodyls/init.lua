-- kodyls for Neovim: starts the kodyls language server for every file with
-- a name (Kody Rules choose their files by glob, not by language) and adds
-- the commands of the kodyls API (editors/shared/kodyls-api.json):
-- :KodyViolations, :KodyExplain, :KodyFix, :KodyReview, :KodyRule and
-- :KodyStatus.
--
-- Neovim 0.8+ starts the client with vim.lsp.start; 0.7 (Debian 12) with
-- vim.lsp.start_client and vim.lsp.buf_attach_client; 0.11's vim.lsp.config
-- reads lsp/kodyls.lua, which takes its configuration from here.
local M = {}

-- The title of the quickfix list :KodyViolations fills; the list is
-- refreshed on kodyls/ruleViolationsChanged only while it is the current one.
M.qf_title = 'Kody Rules violations'

local defaults = {
  cmd = { 'kodyls', 'serve' },
  settings = {},
  root_markers = { '.kody', '.git' },
  filetypes = nil, -- nil: any file with a name
  flags = nil, -- passed to the client, e.g. { debounce_text_changes = 150 }
  on_attach = nil,
}

M.options = vim.deepcopy(defaults)

-- The last kodyls/status params ({state, message, reviewing}) of each
-- client, by client id: each workspace's server has its own.
local statuses = {}

-- Titles of the running $/progress reports, by token.
local progress_titles = {}

-- Clients started on 0.7, by root directory (vim.lsp.start reuses them itself).
local clients_by_root = {}

local function echo(msg, hl)
  vim.api.nvim_echo({ { msg, hl } }, true, {})
end

local function list(v)
  if type(v) == 'table' then return v end
  return {}
end

local function nonempty(v)
  return type(v) == 'string' and v ~= ''
end

-- JSON object for a Lua table, even an empty one.
local function object(t)
  if t == nil or vim.tbl_isempty(t) then return vim.empty_dict() end
  return t
end

-- request calls client:request on 0.11+ and client.request before.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function execute(client, command, arg, handler, bufnr)
  local params = { command = command, arguments = arg and { arg } or nil }
  request(client, 'workspace/executeCommand', params, function(err, result, ctx)
    if err and err.code == -32801 then
      -- ContentModified: a newer review of the buffer replaced this one
      -- and shows its findings when it ends; not a failure.
      echo('kodyls: ' .. (err.message or command))
      return
    end
    if err then
      echo('kodyls: ' .. command .. ': ' .. (err.message or vim.inspect(err)), 'ErrorMsg')
      return
    end
    handler(result, ctx)
  end, bufnr)
end

local function is_kodyls(client)
  return client ~= nil and client.name == 'kodyls' and vim.lsp.get_client_by_id(client.id) ~= nil
end

--- The kodyls client attached to bufnr (default: the current buffer), else
--- any running kodyls client, else nil.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local all = (vim.lsp.get_clients or vim.lsp.get_active_clients)()
  local any
  for _, c in ipairs(all) do
    if is_kodyls(c) then
      if vim.lsp.buf_is_attached(bufnr, c.id) then return c end
      any = any or c
    end
  end
  return any
end

local function client_or_warn()
  local c = M.client()
  if not c then echo('kodyls: no kodyls server is running; open a file of a workspace first', 'WarningMsg') end
  return c
end

--- The root directory of path: the nearest directory upward holding one of
--- the root markers, else the file's directory.
function M.root_dir(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local cur = dir
  while true do
    for _, marker in ipairs(M.options.root_markers) do
      if vim.loop.fs_stat(cur .. '/' .. marker) then return cur end
    end
    local parent = vim.fn.fnamemodify(cur, ':h')
    if parent == cur then return dir end
    cur = parent
  end
end

--- The last kodyls/status ({state, message, reviewing}) of the kodyls
--- client of bufnr (default: the current buffer; see M.client), or nil
--- before that server sent one.
function M.status(bufnr)
  local c = M.client(bufnr)
  return c and statuses[c.id] or nil
end

--- A short status for a statusline: "kody:ready", "kody:reviewing(2)", or
--- "" before the server sent one. In 'statusline', %{} runs in the window
--- drawn, so each window shows the status of its buffer's server.
function M.statusline(bufnr)
  local s = M.status(bufnr)
  if not s then return '' end
  local n = s.reviewing or 0
  if n > 0 then return string.format('kody:%s(%d)', s.state, n) end
  return 'kody:' .. s.state
end

-- Quickfix entries of a kodyls.ruleViolations result: one per violation,
-- grouped by rule, then one per rule file that failed to load.
local types = { critical = 'E', high = 'W', medium = 'I', low = 'N' }

-- The text of line lnum (0-based) of uri: its buffer when loaded, else
-- the file on disk; nil when neither has it.
local function line_text(uri, lnum)
  local bufnr = vim.uri_to_bufnr(uri)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  end
  local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri), '', lnum + 1)
  if ok then return lines[lnum + 1] end
end

-- byte_col is the 0-based byte column of the LSP position pos of uri, whose
-- character counts in encoding (the client's offset_encoding): quickfix
-- columns are bytes, and a UTF-16 count is not one on a non-ASCII line.
local function byte_col(uri, pos, encoding)
  if encoding == 'utf-8' or pos.character == 0 then return pos.character end
  local line = line_text(uri, pos.line)
  if not line then return pos.character end
  local ok, col
  if vim.fn.has('nvim-0.11') == 1 then
    ok, col = pcall(vim.str_byteindex, line, encoding, pos.character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, pos.character, encoding == 'utf-16')
  end
  if ok and col then return col end
  return #line
end

-- rule_file is the path of the rule file of entry (a rule error or a
-- rule): its absolute uri where the server sends one, else its file,
-- relative to the workspace root.
local function rule_file(entry, root)
  if type(entry.uri) == 'string' and entry.uri ~= '' then return vim.uri_to_fname(entry.uri) end
  local file = entry.file or ''
  if root and file:sub(1, 1) ~= '/' then file = root .. '/' .. file end
  return file
end

local not_checked_text = 'not checked offline (no detector, no model): '

local function violation_items(result, root, encoding)
  local items = {}
  for _, g in ipairs(list(result.groups)) do
    for _, v in ipairs(list(g.violations)) do
      local text = nonempty(v.message) and v.message or v.match
      table.insert(items, {
        filename = vim.uri_to_fname(v.uri),
        lnum = v.range.start.line + 1,
        col = byte_col(v.uri, v.range.start, encoding) + 1,
        type = types[g.rule.severity] or 'W',
        text = string.format('[%s] %s: %s', g.rule.severity, g.rule.title, text),
      })
    end
  end
  for _, e in ipairs(list(result.ruleErrors)) do
    table.insert(items, { filename = rule_file(e, root), lnum = math.max(e.line, 1), type = 'E', text = 'broken Kody Rule: ' .. e.message })
  end
  -- Rules only a model can check, with no model configured: not checked
  -- at all, which an empty list must not hide.
  for _, r in ipairs(list(result.notChecked)) do
    table.insert(items, {
      filename = rule_file(r, root), lnum = 1, type = 'I',
      text = not_checked_text .. r.title, kody_not_checked = true,
    })
  end
  return items
end

local function qf_is_kody()
  return vim.fn.getqflist({ title = 0 }).title == M.qf_title
end

-- Every running kodyls client, one per workspace, in start order.
local function kodyls_clients()
  local out = {}
  for _, c in ipairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    if is_kodyls(c) then table.insert(out, c) end
  end
  table.sort(out, function(a, b) return a.id < b.id end)
  return out
end

-- Numbers the fills: only the latest one sets the list, so that a slower,
-- older answer cannot overwrite a newer one; a :KodyViolations a refresh
-- superseded still opens the list (open_pending).
local fill_seq, open_pending = 0, false

-- fill_violations asks every running kodyls client (every workspace) for
-- its violations and sets the quickfix list to all of them: the Kody list
-- is replaced in place, any other list is kept and a new one added after
-- it (only when open: a refresh leaves other lists be).
local function fill_violations(open)
  local clients = kodyls_clients()
  fill_seq = fill_seq + 1
  local seq = fill_seq
  open_pending = open_pending or open
  local results, pending = {}, #clients
  local function done()
    if seq ~= fill_seq then return end
    open, open_pending = open_pending, false
    local ours = qf_is_kody()
    if not open and not ours then return end
    local items, seen, not_checked = {}, {}, 0
    for _, c in ipairs(clients) do
      local r = results[c.id]
      if r then
        for _, it in ipairs(violation_items(r, c.config.root_dir, c.offset_encoding or 'utf-16')) do
          -- A buffer attached to two clients (nested workspaces) lists
          -- its violations once.
          local key = table.concat({ it.filename, it.lnum, it.col or 0, it.text }, '\0')
          if not seen[key] then
            seen[key] = true
            if it.kody_not_checked then not_checked = not_checked + 1 end
            it.kody_not_checked = nil
            table.insert(items, it)
          end
        end
      end
    end
    vim.fn.setqflist({}, ours and 'r' or ' ', { title = M.qf_title, items = items })
    if not open then return end
    if #items == 0 then
      echo('kodyls: no Kody Rules violations in the open buffers')
      return
    end
    if not_checked == #items then
      echo(string.format('kodyls: no Kody Rules violations found in the open buffers, but %d rule(s) were not checked (no detector, no model configured)', not_checked), 'WarningMsg')
    end
    vim.cmd('botright copen')
    vim.cmd('wincmd p')
  end
  local function answered()
    pending = pending - 1
    if pending == 0 then done() end
  end
  for _, c in ipairs(clients) do
    local sent = request(c, 'workspace/executeCommand', { command = 'kodyls.ruleViolations' }, function(err, result)
      if err then
        echo('kodyls: kodyls.ruleViolations: ' .. (err.message or vim.inspect(err)), 'ErrorMsg')
      else
        results[c.id] = result or {}
      end
      answered()
    end)
    -- A client shutting down sends nothing and never answers.
    if not sent then answered() end
  end
end

-- Handlers of the kodyls client: its notifications and its progress.
local handlers = {}

handlers['kodyls/status'] = function(_, params, ctx)
  -- The statuses of clients that have exited are never read again.
  for id in pairs(statuses) do
    if not vim.lsp.get_client_by_id(id) then statuses[id] = nil end
  end
  if ctx and ctx.client_id then statuses[ctx.client_id] = params end
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'KodylsStatus', modeline = false })
end

handlers['kodyls/ruleViolationsChanged'] = function()
  if qf_is_kody() then fill_violations(false) end
end

-- One message per begin, report and end of kodyls's own progress reports;
-- Neovim's handler still runs, for statusline plugins.
handlers['$/progress'] = function(err, result, ctx, config)
  local v = result and result.value
  if type(v) == 'table' then
    local token = tostring(result.token)
    if v.kind == 'begin' then
      progress_titles[token] = v.title
      vim.notify('kodyls: ' .. v.title .. (nonempty(v.message) and (': ' .. v.message) or ''), vim.log.levels.INFO)
    elseif v.kind == 'report' and nonempty(v.message) then
      vim.notify('kodyls: ' .. (progress_titles[token] or '') .. ': ' .. v.message, vim.log.levels.INFO)
    elseif v.kind == 'end' then
      vim.notify('kodyls: ' .. (progress_titles[token] or '') .. ': ' .. (nonempty(v.message) and v.message or 'done'), vim.log.levels.INFO)
      progress_titles[token] = nil
    end
  end
  local default = vim.lsp.handlers['$/progress']
  if default then return default(err, result, ctx, config) end
end

--- The client configuration for root (nil on 0.11's vim.lsp.config, which
--- finds the root from root_markers).
function M.client_config(root)
  local o = M.options
  return {
    name = 'kodyls',
    cmd = o.cmd,
    root_dir = root,
    root_markers = root == nil and o.root_markers or nil,
    filetypes = root == nil and o.filetypes or nil,
    init_options = object(o.settings),
    -- The plugin shows command results itself (the explanation float), so
    -- the server need not open them as documents (kodyls-api.json's
    -- clientCapabilities).
    capabilities = vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(),
      { experimental = { kodyls = { commandResults = true } } }),
    settings = { kodyls = object(o.settings) },
    handlers = handlers,
    flags = o.flags,
    on_attach = o.on_attach,
  }
end

-- attach starts (or reuses) the client of the buffer's root and attaches it.
local function attach(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then return end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or M.client(bufnr) and vim.lsp.buf_is_attached(bufnr, M.client(bufnr).id) then return end
  local root = M.root_dir(name)
  if vim.lsp.start then
    vim.lsp.start(M.client_config(root), { bufnr = bufnr })
    return
  end
  local id = clients_by_root[root]
  if not id or not is_kodyls(vim.lsp.get_client_by_id(id)) then
    id = vim.lsp.start_client(M.client_config(root))
    clients_by_root[root] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
end

-- The diagnostic under the cursor (any server's) that keep accepts: the one
-- whose range holds the cursor, else the first on the line.
local function diagnostic_at_cursor(keep)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local first
  for _, d in ipairs(vim.diagnostic.get(0, { lnum = row - 1 })) do
    if not keep or keep(d) then
      local end_col = (d.end_lnum or d.lnum) == d.lnum and (d.end_col or d.col) or math.huge
      if col >= d.col and col <= end_col then return d end
      first = first or d
    end
  end
  return first
end

local function lsp_range(d)
  local lsp = d.user_data and d.user_data.lsp
  if lsp and lsp.range then return lsp.range end
  return {
    start = { line = d.lnum, character = d.col },
    ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
  }
end

-- diagnostic_arg is the argument of kodyls.explainError and
-- kodyls.fixError for diagnostic d of bufnr.
local function diagnostic_arg(d, bufnr)
  local arg = { uri = vim.uri_from_bufnr(bufnr), range = lsp_range(d), message = d.message }
  if d.code ~= nil then arg.code = tostring(d.code) end
  if d.source ~= nil then arg.source = d.source end
  return arg
end

-- show_markdown opens a focused floating window with text, closed with q.
local function show_markdown(text)
  local lines = vim.split(text, '\n', { plain = true })
  local width = 20
  for _, l in ipairs(lines) do width = math.max(width, vim.fn.strdisplaywidth(l)) end
  width = math.min(width, math.max(20, vim.o.columns - 8))
  local height = math.min(#lines, math.max(3, vim.o.lines - 6))
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'markdown'
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor', style = 'minimal', border = 'rounded',
    width = width, height = height,
    row = math.floor((vim.o.lines - height) / 2), col = math.floor((vim.o.columns - width) / 2),
  })
  vim.wo[win].wrap = true
  vim.wo[win].conceallevel = 2
  vim.api.nvim_buf_set_keymap(buf, 'n', 'q', '<cmd>close<CR>', { noremap = true, silent = true, nowait = true })
  return win, buf
end

--- :KodyViolations
function M.violations()
  if client_or_warn() then fill_violations(true) end
end

--- :KodyExplain
function M.explain()
  local c = client_or_warn()
  local d = diagnostic_at_cursor()
  if not c then return end
  if not d then
    echo('kodyls: no diagnostic under the cursor', 'WarningMsg')
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  execute(c, 'kodyls.explainError', diagnostic_arg(d, bufnr), function(result)
    show_markdown(result.markdown)
  end, bufnr)
end

--- :KodyFix: the server plans and verifies a fix of the diagnostic under
--- the cursor, asks you to confirm it (the prompt shows the diff), and then
--- sends it as workspace/applyEdit, which changes the buffers (not the
--- files: review the change, then :write); the summary with the diff opens
--- in a floating window.
function M.fix()
  local c = client_or_warn()
  local d = diagnostic_at_cursor()
  if not c then return end
  if not d then
    echo('kodyls: no diagnostic under the cursor', 'WarningMsg')
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  execute(c, 'kodyls.fixError', diagnostic_arg(d, bufnr), function(result)
    if nonempty(result.markdown) then show_markdown(result.markdown) end
    local how = 'the build still fails with it'
    if result.verified then
      how = 'the build passes with it'
    elseif result.verification == 'skipped' then
      how = 'not verified (no build.onSave)'
    elseif result.verification == 'notRun' then
      how = 'the build did not run (see the summary)'
    end
    echo(string.format('kodyls: %s a fix after %d plan version(s); %s', result.applied and 'applied' or 'proposed', result.rounds or 0, how))
  end, bufnr)
end

local function review_summary(r)
  local name = vim.fn.fnamemodify(vim.uri_to_fname(r.uri), ':~:.')
  if nonempty(r.skipped) then return name .. ': not reviewed: ' .. r.skipped end
  local s = string.format('%s: %d finding(s), %d hunk(s) reviewed, %d from cache', name, r.findings, r.hunks, r.cachedHunks)
  if r.offline == true then s = s .. ' (offline: local Kody Rules only)' end
  if #list(r.degraded) > 0 then s = s .. ' (degraded: ' .. table.concat(r.degraded, ', ') .. ')' end
  return s
end

--- :KodyReview [file|workspace]
function M.review(scope)
  scope = nonempty(scope) and scope or 'file'
  local c = client_or_warn()
  if not c then return end
  local bufnr = vim.api.nvim_get_current_buf()
  if scope == 'file' then
    execute(c, 'kodyls.reviewFile', { uri = vim.uri_from_bufnr(bufnr) }, function(r)
      echo('kodyls: ' .. review_summary(r))
    end, bufnr)
  elseif scope == 'workspace' then
    execute(c, 'kodyls.reviewWorkspace', nil, function(results)
      local files, findings, parts = 0, 0, {}
      for _, r in ipairs(list(results)) do
        files = files + 1
        findings = findings + (r.findings or 0)
        table.insert(parts, review_summary(r))
      end
      echo(string.format('kodyls: reviewed %d open file(s), %d finding(s): %s', files, findings, table.concat(parts, '; ')))
    end, bufnr)
  else
    echo('kodyls: :KodyReview takes file or workspace', 'ErrorMsg')
  end
end

--- :KodyRule
function M.rule()
  local c = client_or_warn()
  if not c then return end
  -- Only a Kody Rule's diagnostic names a rule (data.rule): a review
  -- finding that is not a rule's violation has source kody too, and its
  -- code is its label, not a uuid.
  local function rule_of(d)
    local data = d.user_data and d.user_data.lsp and d.user_data.lsp.data
    return type(data) == 'table' and nonempty(data.rule) and data.rule or nil
  end
  local d = diagnostic_at_cursor(function(d) return d.source == 'kody' and rule_of(d) ~= nil end)
  local uuid = d and rule_of(d)
  if not uuid then
    echo('kodyls: no Kody Rule diagnostic under the cursor', 'WarningMsg')
    return
  end
  -- The buffer names its workspace folder, whose rule of this uuid it is.
  execute(c, 'kodyls.showRule', { uuid = uuid, uri = vim.uri_from_bufnr(0) }, function(loc)
    -- The server opens the rule itself with window/showDocument when the
    -- client supports it (0.8+), before it answers: opening it again here
    -- would jump back to the rule when the user moved on in between.
    local caps = c.config and c.config.capabilities
    if caps and caps.window and caps.window.showDocument and caps.window.showDocument.support then return end
    local target = vim.fn.fnamemodify(vim.uri_to_fname(loc.uri), ':p')
    if vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':p') == target then return end
    local enc = c.offset_encoding or 'utf-16'
    if vim.lsp.util.show_document then
      vim.lsp.util.show_document(loc, enc, { focus = true })
    else
      vim.lsp.util.jump_to_location(loc, enc)
    end
  end)
end

--- :KodyStatus
function M.echo_status()
  local s = M.status()
  if not s then
    echo('kodyls: no status yet (is kodyls attached to a buffer?)', 'WarningMsg')
    return
  end
  local msg = 'kodyls: ' .. s.state
  if (s.reviewing or 0) > 0 then msg = msg .. string.format(', %d reviewing', s.reviewing) end
  if nonempty(s.message) then msg = msg .. ' (' .. s.message .. ')' end
  echo(msg)
end

--- Defines the user commands (also done by setup and lsp/kodyls.lua).
function M.create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KodyViolations', M.violations, { desc = 'Kody Rules violations in the quickfix list' })
  cmd('KodyExplain', M.explain, { desc = 'Explain the diagnostic under the cursor' })
  cmd('KodyFix', M.fix, { desc = 'Fix the diagnostic under the cursor (edits the buffers)' })
  cmd('KodyReview', function(a) M.review(a.args) end, {
    nargs = '?', desc = 'Run the AI review of the file or of every open file',
    complete = function() return { 'file', 'workspace' } end,
  })
  cmd('KodyRule', M.rule, { desc = 'Open the Kody Rule of the diagnostic under the cursor' })
  cmd('KodyStatus', M.echo_status, { desc = 'Show the kodyls model and review state' })
end

local function set_options(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  -- Lists replace the defaults instead of merging index by index.
  for _, k in ipairs({ 'cmd', 'root_markers', 'filetypes' }) do
    if opts and opts[k] then M.options[k] = opts[k] end
  end
end

--- The configuration for vim.lsp.config (Neovim 0.11+), used by
--- lsp/kodyls.lua; setup's options apply when setup ran first.
function M.lsp_config()
  M.create_commands()
  return M.client_config(nil)
end

--- setup{cmd, settings, root_markers, filetypes, flags, on_attach} starts
--- kodyls for the matching buffers, those open now and those opened later.
function M.setup(opts)
  set_options(opts)
  M.create_commands()
  local group = vim.api.nvim_create_augroup('kodyls', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.options.filetypes or '*',
    callback = function(args) attach(args.buf) end,
  })
  if not M.options.filetypes then
    -- A file without a file type gets no FileType event: attach once
    -- detection is over (a no-op when FileType attached it already).
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      callback = function(args) vim.schedule(function() attach(args.buf) end) end,
    })
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      local ft = vim.bo[b].filetype
      if not M.options.filetypes or vim.tbl_contains(M.options.filetypes, ft) then attach(b) end
    end
  end
end

return M
