-- Headless test of :KodyViolations with two workspaces, one kodyls client
-- each: the list holds the violations of both, and stays so when either
-- client sends kodyls/ruleViolationsChanged; a violation after non-ASCII
-- text gets its byte column, whatever the client's position encoding.
-- $KODYLS_FILE2 is main.go of the second workspace. Results go to
-- $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')
local file2 = os.getenv('KODYLS_FILE2')

H.setup()

local function qf()
  local items = {}
  for _, it in ipairs(vim.fn.getqflist()) do
    table.insert(items, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, col = it.col, text = it.text })
  end
  return items
end

-- The entries of the list in file.
local function entries(file)
  return vim.tbl_filter(function(it) return it.file == file end, qf())
end

local function wait_diagnostic(bufnr, lnum, name)
  local found
  H.step(name, vim.wait(10000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.lnum == lnum and d.source == 'kody' then found = d return true end
    end
    return false
  end, 20), vim.inspect(H.diagnostics(bufnr)))
  return found
end

-- Workspace 1: a violation after five é (two bytes, one UTF-16 unit each).
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local buf1 = vim.api.nvim_get_current_buf()
local c1 = H.client(buf1)
local wide = '\ts := "ééééé"; fmt.Println(s)'
vim.api.nvim_buf_set_lines(buf1, 6, 6, false, { wide })
local d1 = wait_diagnostic(buf1, 6, 'diagnostic after the non-ASCII text')

-- Workspace 2, its own client.
vim.cmd('edit ' .. vim.fn.fnameescape(file2))
local buf2 = vim.api.nvim_get_current_buf()
local c2 = H.client(buf2)
H.step('a client per workspace', c1.id ~= c2.id, vim.inspect({ c1.config.root_dir, c2.config.root_dir }))
vim.api.nvim_buf_set_lines(buf2, 6, 6, false, { '\tfmt.Println("two")' })
wait_diagnostic(buf2, 6, 'diagnostic in the second workspace')

vim.cmd('KodyViolations')
H.step(':KodyViolations lists both workspaces', vim.wait(10000, function()
  return #entries(H.file) == 1 and #entries(file2) == 1
end, 20), vim.inspect({ title = vim.fn.getqflist({ title = 0 }).title, items = qf() }))

local want = wide:find('fmt.Println(', 1, true)
local got = entries(H.file)[1]
H.step('byte column after non-ASCII text', got.lnum == 7 and got.col == want and got.col == d1.col + 1,
  vim.inspect({ want = want, diagnostic_col = d1.col, entry = got, encoding = c1.offset_encoding }))

-- A new violation in each workspace: each client's notification refreshes
-- the list, which keeps the other workspace's entries.
vim.api.nvim_buf_set_lines(buf2, 7, 7, false, { '\tfmt.Println("three")' })
H.step('refresh from the second client keeps the first workspace', vim.wait(10000, function()
  return #entries(file2) == 2 and #entries(H.file) == 1
end, 20), vim.inspect(qf()))
vim.api.nvim_buf_set_lines(buf1, 7, 7, false, { '\tfmt.Println("four")' })
H.step('refresh from the first client keeps the second workspace', vim.wait(10000, function()
  return #entries(H.file) == 2 and #entries(file2) == 2
end, 20), vim.inspect(qf()))
H.step('still the Kody list', vim.fn.getqflist({ title = 0 }).title == 'Kody Rules violations', '')
H.result.quickfix = qf()

-- vim.lsp.stop_client is deprecated from 0.12.
if vim.fn.has('nvim-0.11') == 1 then c2:stop() else c2.stop() end
vim.wait(3000, function() return vim.lsp.get_client_by_id(c2.id) == nil end, 20)
H.stop(c1)
