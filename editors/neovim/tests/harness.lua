-- Shared by the headless Neovim tests the Go tests in cmd/kodyls run: the
-- environment they set, the step log, the JSON result written to
-- $KODYLS_OUT, and the plugin set up against the binary under test.
-- Written for Neovim 0.7 (Debian 12) and later.
local H = {
  bin = os.getenv('KODYLS_BIN'),
  root = os.getenv('KODYLS_ROOT'),
  file = os.getenv('KODYLS_FILE'),
  out = os.getenv('KODYLS_OUT'),
  plugin = os.getenv('KODYLS_PLUGIN'),
  result = { steps = {} },
}

function H.finish()
  local f = io.open(H.out, 'w')
  f:write(vim.fn.json_encode(H.result))
  f:close()
  vim.cmd('qa!')
end

-- step records a check; the first failing one ends the run.
function H.step(name, ok, detail)
  table.insert(H.result.steps, { name = name, ok = ok and true or false, detail = detail })
  if not ok then H.finish() end
end

-- setup loads the plugin from the repository and starts kodyls for every
-- file opened from now on, with no debounce so the tests run fast.
function H.setup(opts)
  vim.opt.rtp:prepend(H.plugin)
  require('kodyls').setup(vim.tbl_extend('keep', opts or {}, {
    cmd = { H.bin, '--log-level', 'debug', 'serve' },
    flags = { debounce_text_changes = 0 },
  }))
end

-- setup_lsp_config starts kodyls the Neovim 0.11+ way: lsp/kodyls.lua of
-- the plugin found on the runtimepath by vim.lsp.enable, with the test's
-- command set through vim.lsp.config; no setup{} call.
function H.setup_lsp_config()
  vim.cmd('filetype on')
  vim.opt.rtp:prepend(H.plugin)
  vim.lsp.config('kodyls', {
    cmd = { H.bin, '--log-level', 'debug', 'serve' },
    flags = { debounce_text_changes = 0 },
  })
  vim.lsp.enable('kodyls')
end

-- client waits until kodyls is attached to bufnr and initialized.
function H.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local c
  local ok = vim.wait(10000, function()
    c = require('kodyls').client(bufnr)
    return c ~= nil and c.initialized and vim.lsp.buf_is_attached(bufnr, c.id)
  end, 20)
  H.step('kodyls attached and initialized', ok, '')
  return c
end

-- stop stops the client and waits for it to exit, then writes the result.
-- A run whose :messages report a deprecated API fails: each Neovim the
-- plugin supports must run it without warnings.
function H.stop(client)
  local msgs = H.messages()
  H.step('no deprecation warnings', not msgs:lower():find('deprecat', 1, true), msgs)
  vim.lsp.stop_client(client.id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 20)
  H.result.ok = true
  H.finish()
end

-- request_sync calls client:request_sync on 0.11+ and client.request_sync
-- before (the dot form is deprecated from 0.11).
function H.request_sync(client, method, params, timeout, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request_sync(method, params, timeout, bufnr)
  end
  return client.request_sync(method, params, timeout, bufnr)
end

-- lsp_diagnostic is the LSP form of the first diagnostic on lnum (0-based)
-- of the current buffer from client, as a code action request carries it.
function H.lsp_diagnostic(lnum)
  if vim.fn.has('nvim-0.10') == 0 then
    return vim.lsp.diagnostic.get_line_diagnostics(0, lnum)[1]
  end
  for _, d in ipairs(vim.diagnostic.get(0, { lnum = lnum })) do
    if d.user_data and d.user_data.lsp then return d.user_data.lsp end
  end
end

function H.messages()
  if vim.api.nvim_exec2 then
    return vim.api.nvim_exec2('messages', { output = true }).output
  end
  return vim.api.nvim_exec('messages', true)
end

-- wait_message waits for :messages to contain text (plain).
function H.wait_message(name, text, timeout)
  H.step(name, vim.wait(timeout or 10000, function()
    return H.messages():find(text, 1, true) ~= nil
  end, 20), H.messages())
end

function H.diagnostics(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr or 0)) do
    table.insert(list, { lnum = d.lnum, col = d.col, source = d.source, code = d.code, message = d.message })
  end
  return list
end

-- H.code_action applies, the way a user does, the quick fix under the
-- cursor that is_fix(action) picks, through vim.lsp.buf.code_action: 0.8+
-- applies the one action the filter keeps (apply = true); 0.7 has neither
-- option and always shows its menu, vim.ui.select, where the user picks it
-- (the choice is made here). It returns the titles offered.
function H.code_action(is_fix)
  local offered = {}
  if vim.fn.has('nvim-0.8') == 1 then
    vim.lsp.buf.code_action({
      context = { only = { 'quickfix' } },
      apply = true,
      filter = function(action)
        table.insert(offered, action.title)
        return is_fix(action)
      end,
    })
  else
    vim.ui.select = function(items, opts, on_choice)
      for _, item in ipairs(items) do
        table.insert(offered, (opts.format_item(item)))
        if is_fix(item[2]) then return on_choice(item) end
      end
      on_choice(nil)
    end
    vim.lsp.buf.code_action({ only = { 'quickfix' } })
  end
  return offered
end

-- H.explain runs :KodyExplain at the cursor, waits for its floating window
-- and returns the window, its buffer and its text.
function H.explain()
  vim.cmd('KodyExplain')
  local float
  H.step(':KodyExplain opens a floating window', vim.wait(20000, function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' then float = w return true end
    end
    return false
  end, 20), H.messages())
  local fbuf = vim.api.nvim_win_get_buf(float)
  return float, fbuf, table.concat(vim.api.nvim_buf_get_lines(fbuf, 0, -1, false), '\n')
end

return H
