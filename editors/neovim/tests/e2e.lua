-- Headless Neovim end-to-end test: the plugin attaches kodyls to a Go
-- buffer; type a line that violates a Kody Rule, wait for the diagnostic
-- on that line, delete the line, wait for it to clear. Results go to
-- $KODYLS_OUT as JSON. With KODYLS_START=lsp_config (Neovim 0.11+) the
-- plugin is started by vim.lsp.enable('kodyls') instead of setup{}.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

local lsp_config = os.getenv('KODYLS_START') == 'lsp_config'
if lsp_config then H.setup_lsp_config() else H.setup() end
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local c = H.client()
H.step('one kodyls client', #vim.tbl_filter(function(x) return x.name == 'kodyls' end,
  (vim.lsp.get_clients or vim.lsp.get_active_clients)()) == 1, '')
H.step('the :Kody commands exist', vim.fn.exists(':KodyStatus') == 2 and vim.fn.exists(':KodyViolations') == 2, '')
-- Neovim 0.7 does not keep serverInfo; the capabilities show the handshake.
H.step('capabilities', c.server_capabilities ~= nil and c.server_capabilities.executeCommandProvider ~= nil, vim.inspect(c.server_capabilities))
H.step('root directory from the root markers', c.config.root_dir == H.root, tostring(c.config.root_dir))

-- Type a violating line below line 6 (`fmt.Print("hi")`), as a user would.
vim.api.nvim_win_set_cursor(0, { 6, 0 })
vim.cmd('normal! ofmt.Println("typed in nvim")')
local shown = vim.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.lnum == 6 and d.source == 'kody' then return true end
  end
  return false
end, 20)
H.step('diagnostic on the typed line', shown, vim.inspect(H.diagnostics()))
H.result.after_typing = H.diagnostics()

-- Delete the line: the diagnostic must go away.
vim.cmd('7delete')
local cleared = vim.wait(10000, function() return #vim.diagnostic.get(0) == 0 end, 20)
H.step('cleared after delete', cleared, vim.inspect(H.diagnostics()))

H.stop(c)
