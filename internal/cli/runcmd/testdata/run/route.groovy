from('timer:x').to('log:x')
