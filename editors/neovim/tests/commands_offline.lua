-- Headless test of the plugin's commands without a model: :KodyStatus
-- says offline, :KodyViolations fills the quickfix list and the list
-- follows an edit through kodyls/ruleViolationsChanged, :KodyRule opens the
-- rule file, :checkhealth kodyls shows the doctor's report. Results go to
-- $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')
local kodyls

-- A setting the doctor must see: :checkhealth passes the plugin's settings.
H.setup({ settings = { review = { trigger = 'manual' } } })
kodyls = require('kodyls')
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local main = vim.api.nvim_get_current_buf()
local client = H.client()

H.step('status offline', vim.wait(10000, function()
  return kodyls.status() ~= nil and kodyls.status().state == 'offline'
end, 20), vim.inspect(kodyls.status()))
vim.cmd('KodyStatus')
H.wait_message(':KodyStatus echoes offline', 'kodyls: offline')

-- One violation, then the list.
vim.api.nvim_buf_set_lines(main, 6, 6, false, { '\tfmt.Println("one")' })
H.step('diagnostic on the new line', vim.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(main)) do
    if d.lnum == 6 and d.source == 'kody' then return true end
  end
  return false
end, 20), vim.inspect(H.diagnostics(main)))

local function qf_is_kody()
  return vim.fn.getqflist({ title = 0 }).title == 'Kody Rules violations'
end

local function qf()
  local items = {}
  for _, it in ipairs(vim.fn.getqflist()) do
    table.insert(items, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, col = it.col, type = it.type, text = it.text })
  end
  return items
end

vim.cmd('KodyViolations')
H.step(':KodyViolations fills the quickfix list', vim.wait(10000, function()
  return vim.fn.getqflist({ title = 0 }).title == 'Kody Rules violations' and #vim.fn.getqflist() == 1
end, 20), vim.inspect({ title = vim.fn.getqflist({ title = 0 }).title, items = qf() }))
local first = qf()[1]
H.step('quickfix entry', first.file == H.file and first.lnum == 7 and first.col == 2 and first.type == 'W'
  and first.text == '[high] No fmt.Println: fmt.Println(', vim.inspect(first))
H.step('quickfix window open, cursor left in the buffer', vim.fn.getqflist({ winid = 0 }).winid ~= 0
  and vim.api.nvim_get_current_buf() == main, vim.inspect(vim.fn.getqflist({ winid = 0 })))

-- A second violation: the server notifies, the plugin refreshes the list.
vim.api.nvim_buf_set_lines(main, 7, 7, false, { '\tfmt.Println("two")' })
H.step('quickfix refreshed on kodyls/ruleViolationsChanged', vim.wait(10000, function()
  return #vim.fn.getqflist() == 2
end, 20), vim.inspect(qf()))
H.step('still the Kody list', vim.fn.getqflist({ title = 0 }).title == 'Kody Rules violations', '')
H.result.quickfix = qf()

-- :KodyRule on the violation opens the rule file, once.
local wins = #vim.api.nvim_list_wins()
vim.api.nvim_win_set_cursor(0, { 7, 2 })
vim.cmd('KodyRule')
local rule_file = H.root .. '/.kody/rules/no-println.md'
H.step(':KodyRule jumps to the rule file', vim.wait(10000, function()
  return vim.api.nvim_buf_get_name(0) == rule_file
end, 20), vim.api.nvim_buf_get_name(0))
local opened = 0
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b) == rule_file then opened = opened + 1 end
end
H.step('rule file opened once, in the same window', opened == 1 and #vim.api.nvim_list_wins() == wins
  and vim.api.nvim_win_get_cursor(0)[1] == 1, vim.inspect({ opened = opened, wins = #vim.api.nvim_list_wins() }))
vim.cmd('buffer ' .. main)

-- :checkhealth kodyls runs kodyls doctor on the workspace of the buffer.
vim.cmd('checkhealth kodyls')
local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
H.result.health = health
for _, want in ipairs({ H.bin .. ' is executable', 'kodyls doctor --workspace ' .. H.root, 'No fmt.Println', '1 loaded', 'review.trigger=manual', 'kodyls doctor found no problems' }) do
  H.step(':checkhealth kodyls shows ' .. want, health:find(want, 1, true) ~= nil, health)
end
H.step(':checkhealth kodyls has no error', health:find('ERROR', 1, true) == nil, health)
vim.cmd('tabclose')

-- How long a user waits from the keystroke that breaks a rule to its
-- diagnostic, and to the refreshed :KodyViolations list (through
-- kodyls/ruleViolationsChanged), without saving: five new lines typed in
-- insert mode, `fmt.Println` first, then the timed `(` that completes the
-- rule's match. This client has no debounce; Neovim's default adds up to
-- 150 ms. Reported by the Go test, not asserted (only bounded by the wait).
H.step('back in main.go, the Kody list current', vim.api.nvim_get_current_buf() == main and qf_is_kody(),
  vim.api.nvim_buf_get_name(0) .. ' ' .. vim.fn.getqflist({ title = 0 }).title)
H.result.latency_ms, H.result.quickfix_latency_ms = {}, {}
for i = 1, 5 do
  vim.cmd('normal! Go\tfmt.Println')
  local lnum = vim.api.nvim_buf_line_count(main) - 1
  local items = #vim.fn.getqflist()
  local t0 = vim.loop.hrtime()
  vim.cmd('normal! A(')
  local diag_ms, qf_ms
  local seen = vim.wait(10000, function()
    local now = (vim.loop.hrtime() - t0) / 1e6
    if not diag_ms then
      for _, d in ipairs(vim.diagnostic.get(main)) do
        if d.lnum == lnum and d.source == 'kody' then diag_ms = now end
      end
    end
    if not qf_ms and #vim.fn.getqflist() == items + 1 then qf_ms = now end
    return diag_ms ~= nil and qf_ms ~= nil
  end, 1)
  H.step('diagnostic and quickfix entry for late violation ' .. i, seen and qf_is_kody()
    and vim.fn.getqflist()[items + 1].lnum == lnum + 1,
    vim.inspect({ buffer = vim.api.nvim_buf_get_name(0), lines = vim.api.nvim_buf_get_lines(main, 0, -1, false), diagnostics = H.diagnostics(main), quickfix = qf() }))
  vim.cmd('normal! A"late' .. i .. '")')
  table.insert(H.result.latency_ms, diag_ms)
  table.insert(H.result.quickfix_latency_ms, qf_ms)
end

-- The rule's detector has a replace: the violation on line 7 offers "Apply
-- Kody fix", applied the way a user does, through vim.lsp.buf.code_action
-- (0.8+: the one action the filter keeps; 0.7: its menu, vim.ui.select,
-- where the user picks it). The call is rewritten and the list shrinks.
vim.api.nvim_win_set_cursor(0, { 7, 1 })
local before = #vim.fn.getqflist()
local is_fix = function(action) return action.title == 'Apply Kody fix: No fmt.Println' end
local offered = H.code_action(is_fix)
H.step("the detector's fix rewrites the call", vim.wait(10000, function()
  return vim.api.nvim_buf_get_lines(main, 6, 7, false)[1] == '\tlog.Println("one")'
end, 20), vim.inspect({ offered = offered, line = vim.api.nvim_buf_get_lines(main, 6, 7, false) }))
H.step('the fixed violation leaves the Kody list', vim.wait(10000, function()
  return qf_is_kody() and #vim.fn.getqflist() == before - 1
end, 20), vim.inspect(qf()))

H.stop(client)
