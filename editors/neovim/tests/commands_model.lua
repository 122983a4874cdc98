-- Headless test of the plugin's commands with a model (the fake endpoint
-- of agents/llmtest): :KodyStatus says ready, :KodyReview file and
-- workspace echo their summaries, :KodyExplain shows the explanation of
-- the diagnostic under the cursor in a floating Markdown window closed
-- with q. Results go to $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

H.setup({ settings = { review = { trigger = 'manual' } } })
local kodyls = require('kodyls')
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local main = vim.api.nvim_get_current_buf()
local client = H.client()

H.step('status ready', vim.wait(10000, function()
  return kodyls.status() ~= nil and kodyls.status().state == 'ready'
end, 20), vim.inspect(kodyls.status()))
vim.cmd('KodyStatus')
H.wait_message(':KodyStatus echoes ready', 'kodyls: ready')
H.step('statusline', kodyls.statusline() == 'kody:ready', kodyls.statusline())

-- Line 7 holds the loop; make it off by one, review the file on demand.
vim.api.nvim_buf_set_lines(main, 6, 7, false, { '\tfor i := 0; i <= len(items); i++ {' })
vim.cmd('KodyReview file')
H.wait_message(':KodyReview file echoes the summary', 'kodyls: main.go: 1 finding(s), 1 hunk(s) reviewed', 20000)
H.step('review diagnostic', vim.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(main)) do
    if d.lnum == 6 and d.code == 'bug' then return true end
  end
  return false
end, 20), vim.inspect(H.diagnostics(main)))

vim.cmd('KodyReview workspace')
H.wait_message(':KodyReview workspace echoes the summary', 'kodyls: reviewed 1 open file(s), 1 finding(s): main.go: 1 finding(s)', 20000)

-- The workspace review also judged the pull-request rule over the change
-- set: api/orders.go changed on disk and is not open, and :KodyViolations
-- lists its violation on its line.
vim.cmd('KodyViolations')
H.step(':KodyViolations lists a violation in a file that is not open', vim.wait(10000, function()
  for _, it in ipairs(vim.fn.getqflist()) do
    if vim.api.nvim_buf_get_name(it.bufnr):find('api/orders.go', 1, true) and it.lnum == 3 then return true end
  end
  return false
end, 20), vim.inspect(vim.fn.getqflist()))
vim.cmd('cclose')
vim.api.nvim_set_current_buf(main)

-- Explain the review finding under the cursor.
vim.api.nvim_win_set_cursor(0, { 7, 1 })
local float, fbuf, text = H.explain()
H.result.explanation = text
H.step('explanation has the root cause', text:find('Root cause', 1, true) ~= nil
  and text:find('reads one element past the end', 1, true) ~= nil, text)
H.step('explanation is Markdown', vim.bo[fbuf].filetype == 'markdown', vim.bo[fbuf].filetype)
H.step('the float has the focus', vim.api.nvim_get_current_win() == float, '')
-- The plugin declares that it shows command results, so the server opens
-- no explanation document and sends no message of its own (it does for
-- generic clients).
local opened = {}
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  local name = vim.api.nvim_buf_get_name(b)
  if name:find('explanations', 1, true) then table.insert(opened, name) end
end
H.step('no explanation document opened by the server', #opened == 0, vim.inspect(opened))
H.step('no explanation message from the server', not H.messages():find('Root cause: ', 1, true), H.messages())
H.wait_message('progress of the explanation', 'kodyls: Explaining the error')
vim.cmd('normal q')
H.step('q closes the float', not vim.api.nvim_win_is_valid(float) and vim.api.nvim_get_current_buf() == main, '')

-- Fix the same finding: the server plans the edit against the saved file
-- and sends it as workspace/applyEdit, which changes the buffer, not the
-- file.
vim.cmd('silent write')
vim.api.nvim_win_set_cursor(0, { 7, 1 })
local on_disk = vim.fn.readfile(H.file)
-- Before 0.11 Neovim applies a workspace edit as it comes, so the server
-- asks first, showing the diff (0.10 through vim.ui.select, 0.7 through
-- inputlist); 0.11+ confirms edits that need it itself (confirm()). The user
-- picks the first choice: "Apply fix", or "Yes".
local asked = ''
vim.fn.confirm = function(msg)
  asked = msg
  return 1
end
vim.ui.select = function(items, opts, on_choice)
  asked = opts.prompt or ''
  on_choice(items[1], 1)
end
vim.fn.inputlist = function(lines)
  asked = table.concat(lines, '\n')
  return 1
end
vim.cmd('KodyFix')
H.step(':KodyFix edits the buffer', vim.wait(20000, function()
  return vim.api.nvim_buf_get_lines(main, 6, 7, false)[1] == '\tfor i := 0; i < len(items); i++ {'
end, 20), vim.inspect(vim.api.nvim_buf_get_lines(main, 6, 7, false)))
H.step('the user confirmed the fix first', (asked:find('Apply it?', 1, true) ~= nil
  and asked:find('+\tfor i := 0; i < len(items); i++ {', 1, true) ~= nil)
  or (vim.fn.has('nvim-0.11') == 1 and asked:find('Apply all changes?', 1, true) ~= nil), asked)
H.wait_message(':KodyFix echoes the outcome', 'kodyls: applied a fix after 1 plan version(s); not verified (no build.onSave)', 20000)
H.step('the buffer is modified, the file untouched', vim.bo[main].modified
  and vim.deep_equal(vim.fn.readfile(H.file), on_disk), vim.inspect(vim.fn.readfile(H.file)))
for _, w in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(w).relative ~= '' then vim.api.nvim_win_close(w, true) end
end

local idle = H.request_sync(client, 'kodyls/awaitIdle', vim.empty_dict(), 15000, main)
H.step('server idle', idle ~= nil and idle.err == nil, vim.inspect(idle))
H.stop(client)
