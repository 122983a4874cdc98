-- Headless Neovim acceptance test of Kody Rules: open the changed files of
-- the fixture, save each (`:write` sends didSave, which starts the review),
-- wait until every expected rule shows up as a kodyls diagnostic, then
-- write every diagnostic (file, source, code, lines) to $KODYLS_OUT as JSON
-- for the Go test to compare. $KODYLS_FILES is a JSON list of the files,
-- relative to $KODYLS_ROOT; $KODYLS_EXPECT maps each to the rule uuids
-- (diagnostic codes) expected in it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')
local files = vim.fn.json_decode(os.getenv('KODYLS_FILES'))
local expect = vim.fn.json_decode(os.getenv('KODYLS_EXPECT'))
H.result.diagnostics = {}

-- The language id Neovim sends is the filetype, as for any user: the
-- plugin attaches on FileType, once detection is done.
vim.cmd('filetype on')
H.setup()

local bufs = {}
local client
for _, rel in ipairs(files) do
  vim.cmd('edit ' .. vim.fn.fnameescape(H.root .. '/' .. rel))
  bufs[rel] = vim.api.nvim_get_current_buf()
  local c = H.client(bufs[rel])
  client = client or c
  H.step('one client for the workspace: ' .. rel, c.id == client.id, tostring(c.id))
end
-- Saved at once: a review waits for the rules the server loads after
-- initialized.

for _, rel in ipairs(files) do
  vim.cmd('buffer ' .. bufs[rel])
  H.step('filetype of ' .. rel, vim.bo.filetype ~= '', vim.bo.filetype)
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

H.step('every expected rule diagnostic after saving', vim.wait(30000, function()
  return #missing() == 0
end, 20), vim.inspect({ missing = missing(), shown = all_diagnostics() }))

-- Nothing may still be pending (a later publish could add or move one):
-- ask the server, then read the diagnostics once more.
local idle = H.request_sync(client, 'kodyls/awaitIdle', vim.empty_dict(), 15000, bufs[files[1]])
H.step('server idle', idle ~= nil and idle.err == nil, vim.inspect(idle))
vim.wait(5000, function() return #missing() == 0 end, 20)
H.result.diagnostics = all_diagnostics()

H.stop(client)
