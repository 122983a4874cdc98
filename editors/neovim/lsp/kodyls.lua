-- kodyls for Neovim 0.11+'s vim.lsp.config: with editors/neovim on the
-- runtimepath, `vim.lsp.enable('kodyls')` starts it. The defaults (and the
-- options of require('kodyls').setup{} when it ran first) come from the
-- plugin, which also defines the :Kody* commands; override any field with
-- vim.lsp.config('kodyls', {...}).
return require('kodyls').lsp_config()
