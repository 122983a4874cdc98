-- Headless Neovim end-to-end test of the review: change a line, save, wait
-- for the review diagnostic, apply its quick fix through
-- vim.lsp.buf.code_action, check the buffer. Results go to $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

H.setup({ settings = { review = { trigger = 'save' } } })
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local client = H.client()

-- Line 7 holds the loop; make it off by one and save.
vim.api.nvim_buf_set_lines(0, 6, 7, false, { '\tfor i := 0; i <= len(items); i++ {' })
vim.cmd('write')

H.step('review diagnostic after save', vim.wait(15000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.lnum == 6 and d.source == 'kody' and d.code == 'bug' then return true end
  end
  return false
end, 20), vim.inspect(vim.diagnostic.get(0)))

-- Apply the quick fix the way a user does: vim.lsp.buf.code_action on the
-- diagnostic's line. 0.8+ applies the one action the filter keeps
-- (apply = true); 0.7 has neither option and always shows its menu,
-- vim.ui.select, where the user picks the fix (the choice is made here by
-- title). Neovim resolves the action (codeAction/resolve) for its edit.
vim.api.nvim_win_set_cursor(0, { 7, 1 })
local is_fix = function(action) return action.title:find('^Apply Kody fix: ') ~= nil end
local offered = H.code_action(is_fix)
H.step('quick fix applied through vim.lsp.buf.code_action', vim.wait(10000, function()
  return vim.api.nvim_buf_get_lines(0, 6, 7, false)[1] ~= '\tfor i := 0; i <= len(items); i++ {'
end, 20), vim.inspect(offered) .. H.messages())
H.step('quick fix offered', #vim.tbl_filter(function(t) return t:find('^Apply Kody fix: ') ~= nil end, offered) == 1,
  vim.inspect(offered))

local line = vim.api.nvim_buf_get_lines(0, 6, 7, false)[1]
H.result.fixed_line = line
H.step('buffer fixed', line == '\tfor _, it := range items {', line)
H.step('finding cleared after the fix', vim.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == 'bug' then return false end
  end
  return true
end, 20), vim.inspect(vim.diagnostic.get(0)))

H.stop(client)
