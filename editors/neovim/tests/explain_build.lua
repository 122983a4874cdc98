-- Headless test of :KodyExplain on a build error: with build.onSave set to
-- the real `go build ./...`, write a compile error and save; the build's
-- diagnostic shows on its line; :KodyExplain on it shows the explanation
-- (the fake endpoint's root cause) in a floating Markdown window. The
-- Go test passes the expected root cause in $KODYLS_ROOT_CAUSE. Results
-- go to $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

H.setup({ settings = { build = { onSave = 'go build ./...' }, review = { trigger = 'manual' } } })
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local main = vim.api.nvim_get_current_buf()
local client = H.client()

-- Line 6 returns the greeting; make it return a number, and save.
H.step('line 6 is the return', vim.api.nvim_buf_get_lines(main, 5, 6, false)[1] == '\treturn "hello"',
  vim.inspect(vim.api.nvim_buf_get_lines(main, 0, -1, false)))
vim.api.nvim_buf_set_lines(main, 5, 6, false, { '\treturn 42' })
vim.cmd('silent write')

local build
H.step('build error on the saved line', vim.wait(30000, function()
  for _, d in ipairs(vim.diagnostic.get(main)) do
    if d.lnum == 5 and d.source == 'build' then build = d return true end
  end
  return false
end, 20), vim.inspect(H.diagnostics(main)))
H.result.build_message = build.message

vim.api.nvim_win_set_cursor(0, { 6, build.col })
local float, fbuf, text = H.explain()
H.result.explanation = text
H.step('the float explains the build error', text:find(os.getenv('KODYLS_ROOT_CAUSE'), 1, true) ~= nil, text)
H.step('explanation is Markdown', vim.bo[fbuf].filetype == 'markdown', vim.bo[fbuf].filetype)
vim.cmd('normal q')
H.step('q closes the float', not vim.api.nvim_win_is_valid(float) and vim.api.nvim_get_current_buf() == main, '')

local idle = H.request_sync(client, 'kodyls/awaitIdle', vim.empty_dict(), 15000, main)
H.step('server idle', idle ~= nil and idle.err == nil, vim.inspect(idle))
H.stop(client)
