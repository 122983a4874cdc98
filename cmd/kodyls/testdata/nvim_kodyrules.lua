-- Headless Neovim acceptance test of Kody Rules: open the changed files of
-- the fixture, save each (`:write` sends didSave, which starts the review),
-- wait until every expected rule shows up as a kodyls diagnostic, then
-- write every diagnostic (file, source, code, lines) to $KODYLS_OUT as JSON
-- for the Go test to compare. $KODYLS_FILES is a JSON list of the files,
-- relative to $KODYLS_ROOT; $KODYLS_EXPECT maps each to the rule uuids
-- (diagnostic codes) expected in it. Written for Neovim 0.7 and later.
local bin, root, out = os.getenv('KODYLS_BIN'), os.getenv('KODYLS_ROOT'), os.getenv('KODYLS_OUT')
local files = vim.fn.json_decode(os.getenv('KODYLS_FILES'))
local expect = vim.fn.json_decode(os.getenv('KODYLS_EXPECT'))
local result = { steps = {}, diagnostics = {} }

local function finish()
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qa!')
end

local function step(name, ok, detail)
  table.insert(result.steps, { name = name, ok = ok, detail = detail })
  if not ok then finish() end
end

-- The language id Neovim sends is the filetype, as for any user.
vim.cmd('filetype on')

local bufs = {}
local client_id
for i, rel in ipairs(files) do
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. rel))
  bufs[rel] = vim.api.nvim_get_current_buf()
  if i == 1 then
    client_id = vim.lsp.start_client({
      name = 'kodyls',
      cmd = { bin, '--log-level', 'debug', 'serve' },
      root_dir = root,
      flags = { debounce_text_changes = 0 },
    })
    step('start client', client_id ~= nil, tostring(client_id))
  end
  vim.lsp.buf_attach_client(0, client_id)
end
step('initialized', vim.wait(10000, function()
  local c = vim.lsp.get_client_by_id(client_id)
  return c ~= nil and c.initialized
end, 20), '')
local client = vim.lsp.get_client_by_id(client_id)
-- Saved at once: a review waits for the rules the server loads after
-- initialized.

for _, rel in ipairs(files) do
  vim.cmd('buffer ' .. bufs[rel])
  step('filetype of ' .. rel, vim.bo.filetype ~= '', vim.bo.filetype)
  vim.cmd('write')
end

-- missing lists the expected codes not shown yet, per file.
local function missing()
  local left = {}
  for _, rel in ipairs(files) do
    local have = {}
    for _, d in ipairs(vim.diagnostic.get(bufs[rel])) do
      if d.source == 'kody' and d.code ~= nil then have[tostring(d.code)] = true end
    end
    for _, code in ipairs(expect[rel] or {}) do
      if not have[code] then table.insert(left, rel .. ' ' .. code) end
    end
  end
  return left
end

local function all_diagnostics()
  local list = {}
  for _, rel in ipairs(files) do
    for _, d in ipairs(vim.diagnostic.get(bufs[rel])) do
      local end_lnum = d.end_lnum or d.lnum
      -- A range ending at a line start ends on the line before.
      if d.end_col == 0 and end_lnum > d.lnum then end_lnum = end_lnum - 1 end
      table.insert(list, {
        file = rel, source = d.source, code = d.code and tostring(d.code) or '',
        line = d.lnum + 1, end_line = end_lnum + 1, message = d.message,
      })
    end
  end
  return list
end

step('every expected rule diagnostic after saving', vim.wait(30000, function()
  return #missing() == 0
end, 20), vim.inspect({ missing = missing(), shown = all_diagnostics() }))

-- Nothing may still be pending (a later publish could add or move one):
-- ask the server, then read the diagnostics once more.
local idle = client.request_sync('kodyls/awaitIdle', vim.empty_dict(), 15000, bufs[files[1]])
step('server idle', idle ~= nil and idle.err == nil, vim.inspect(idle))
vim.wait(5000, function() return #missing() == 0 end, 20)
result.diagnostics = all_diagnostics()

vim.lsp.stop_client(client_id)
vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
result.ok = true
finish()
