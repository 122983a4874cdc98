-- Headless test of :KodyStatus and the statusline with two workspaces, one
-- kodyls client each, in different states: the first without a model
-- (offline), the second with one (ready, $KODYLS_FAKE_URL). Whichever
-- server spoke last, each buffer shows its own server's status, and each
-- window's statusline its buffer's. $KODYLS_FILE2 is main.go of the second
-- workspace. Results go to $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')
local kodyls
local file2 = os.getenv('KODYLS_FILE2')

local function state(bufnr)
  local s = kodyls.status(bufnr)
  return s and s.state
end

-- kody_status runs :KodyStatus in the current buffer and returns what it
-- added to :messages (which are kept for H.stop's deprecation check).
local function kody_status()
  local before = H.messages()
  vim.cmd('KodyStatus')
  return H.messages():sub(#before + 1)
end

-- The first workspace, with no model.
H.setup()
kodyls = require('kodyls')
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local buf1 = vim.api.nvim_get_current_buf()
local c1 = H.client(buf1)
H.step('first workspace offline', vim.wait(10000, function() return state() == 'offline' end, 20),
  vim.inspect(kodyls.status()))

-- The second, with a model: its client is started with these settings.
H.setup({ settings = { llm = { baseUrl = os.getenv('KODYLS_FAKE_URL'), model = 'fake-model' } } })
vim.cmd('edit ' .. vim.fn.fnameescape(file2))
local buf2 = vim.api.nvim_get_current_buf()
local c2 = H.client(buf2)
H.step('a client per workspace', c1.id ~= c2.id, vim.inspect({ c1.config.root_dir, c2.config.root_dir }))
H.step('second workspace ready', vim.wait(10000, function() return state() == 'ready' end, 20),
  vim.inspect(kodyls.status()))
H.step('statusline of the second workspace', kodyls.statusline() == 'kody:ready', kodyls.statusline())
local echoed = kody_status()
H.step(':KodyStatus in the second workspace', echoed:find('kodyls: ready', 1, true) ~= nil, echoed)

-- Back in the first workspace, after the second server spoke last.
vim.cmd('buffer ' .. buf1)
H.step('status of the first workspace', state() == 'offline' and state(buf2) == 'ready',
  vim.inspect({ current = kodyls.status(), second = kodyls.status(buf2) }))
H.step('statusline of the first workspace', kodyls.statusline() == 'kody:offline', kodyls.statusline())
echoed = kody_status()
H.step(':KodyStatus in the first workspace', echoed:find('kodyls: offline', 1, true) ~= nil
  and echoed:find('kodyls: ready', 1, true) == nil, echoed)

-- Two windows: each statusline shows its buffer's server.
vim.cmd('vsplit | buffer ' .. buf2)
local win2 = vim.api.nvim_get_current_win()
vim.cmd('wincmd p')
local win1 = vim.api.nvim_get_current_win()
local expr = "%{v:lua.require'kodyls'.statusline()}"
local line1 = vim.api.nvim_eval_statusline(expr, { winid = win1 }).str
local line2 = vim.api.nvim_eval_statusline(expr, { winid = win2 }).str
H.step('each window shows its own server', win1 ~= win2 and line1 == 'kody:offline' and line2 == 'kody:ready',
  vim.inspect({ line1, line2 }))

-- vim.lsp.stop_client is deprecated from 0.12.
if vim.fn.has('nvim-0.11') == 1 then c2:stop() else c2.stop() end
vim.wait(3000, function() return vim.lsp.get_client_by_id(c2.id) == nil end, 20)
H.stop(c1)
