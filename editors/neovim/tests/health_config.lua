-- Headless test of :checkhealth kodyls on Neovim 0.11+ when kodyls is
-- configured with vim.lsp.config and no client runs yet: the health check
-- uses that cmd (the binary under test, not on PATH) and passes those
-- settings to the doctor. Results go to $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

vim.opt.rtp:prepend(H.plugin)
vim.lsp.config('kodyls', {
  cmd = { H.bin, 'serve' },
  settings = { kodyls = { review = { trigger = 'manual' } } },
})
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
H.step('no kodyls client runs', require('kodyls').client() == nil, '')

vim.cmd('checkhealth kodyls')
local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
H.result.health = health
for _, want in ipairs({ H.bin .. ' is executable', 'kodyls doctor --workspace ' .. H.root, 'review.trigger=manual', 'kodyls doctor found no problems' }) do
  H.step(':checkhealth kodyls shows ' .. want, health:find(want, 1, true) ~= nil, health)
end
H.step(':checkhealth kodyls has no error', health:find('ERROR', 1, true) == nil, health)
H.result.ok = true
H.finish()
