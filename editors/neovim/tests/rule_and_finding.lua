-- Headless test of :KodyRule on a line that has both a Kody Rule's
-- violation and a finding of the AI review (the fake endpoint of
-- agents/llmtest): the rule's file opens, whichever diagnostic the cursor
-- is on; the finding's label is not taken for a rule's uuid. Results go
-- to $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

H.setup({ settings = { review = { trigger = 'manual' } } })
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local main = vim.api.nvim_get_current_buf()
local client = H.client()

-- Line 7 holds the loop: off by one, it breaks the rule (its detector
-- matches `<= len(`) and the review finds the bug there.
vim.api.nvim_buf_set_lines(main, 6, 7, false, { '\tfor i := 0; i <= len(items); i++ {' })
vim.cmd('KodyReview file')
local function both()
  local finding, violation = false, false
  for _, d in ipairs(vim.diagnostic.get(main, { lnum = 6 })) do
    if d.code == 'bug' then finding = true end
    if d.code == os.getenv('KODYLS_RULE_UUID') then violation = true end
  end
  return finding and violation
end
H.step('the review finding and the violation on line 7', vim.wait(20000, both, 20), vim.inspect(H.diagnostics(main)))

-- The cursor on the finding, before the rule's match.
vim.api.nvim_win_set_cursor(0, { 7, 1 })
vim.cmd('KodyRule')
local rule_file = H.root .. '/.kody/rules/loop-bound.md'
H.step(':KodyRule opens the rule of the line', vim.wait(10000, function()
  return vim.api.nvim_buf_get_name(0) == rule_file
end, 20), vim.api.nvim_buf_get_name(0) .. '\n' .. H.messages())
H.step('no error about a rule uuid', not H.messages():find('no loaded Kody Rule', 1, true), H.messages())
vim.cmd('buffer ' .. main)

-- The finding names no rule: its code is its label.
local finding = {}
for _, d in ipairs(vim.diagnostic.get(main, { lnum = 6 })) do
  if d.code == 'bug' then finding = d end
end
local data = finding.user_data and finding.user_data.lsp and finding.user_data.lsp.data
H.step('the finding has no rule', type(data) == 'table' and data.rule == nil, vim.inspect(finding))

local idle = H.request_sync(client, 'kodyls/awaitIdle', vim.empty_dict(), 15000, main)
H.step('server idle', idle ~= nil and idle.err == nil, vim.inspect(idle))
H.stop(client)
