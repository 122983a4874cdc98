-- Headless test of :KodyViolations without a model when a rule has no
-- detector: the rule is listed as not checked (an info entry on its file),
-- and the echo does not say all is well. Results go to $KODYLS_OUT as
-- JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

H.setup({ settings = { review = { trigger = 'manual' } } })
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local main = vim.api.nvim_get_current_buf()
local client = H.client()
local idle = H.request_sync(client, 'kodyls/awaitIdle', vim.empty_dict(), 15000, main)
H.step('server idle', idle ~= nil and idle.err == nil, vim.inspect(idle))

vim.cmd('KodyViolations')
local items
H.step(':KodyViolations lists the rule not checked', vim.wait(10000, function()
  items = vim.fn.getqflist()
  return vim.fn.getqflist({ title = 0 }).title == 'Kody Rules violations' and #items > 0
end, 20), vim.inspect(vim.fn.getqflist()))
H.result.quickfix = {}
for _, it in ipairs(items) do
  table.insert(H.result.quickfix, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, text = it.text, type = it.type })
end
H.step('the list is open', vim.fn.getqflist({ winid = 0 }).winid ~= 0, '')
local msgs = H.messages()
H.step('no claim that all is well', not msgs:find('no Kody Rules violations in the open buffers', 1, true), msgs)
H.step('the echo says rules were not checked', msgs:find('1 rule(s) were not checked', 1, true) ~= nil, msgs)
H.stop(client)
