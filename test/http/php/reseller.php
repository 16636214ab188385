<?php
// A reseller's script: the usual client class (docs/examples/api-v2-client.php)
// driving every action, printing one JSON object of what it got back.
// Usage: php reseller.php URL KEY SERVICE COMMENTS_SERVICE
require __DIR__ . '/../../../docs/examples/api-v2-client.php';

[, $url, $key, $service, $commentsService] = $argv;
$api = new Api();
$api->api_url = $url;
$api->api_key = $key;
$out = [];

$out['services'] = $api->services();
$out['balance'] = $api->balance();
$first = $api->order(['service' => $service, 'link' => 'https://instagram.com/p/php', 'quantity' => 100]);
$second = $api->order(['service' => $service, 'link' => 'https://instagram.com/p/php2', 'quantity' => 200, 'runs' => 2, 'interval' => 15]);
$out['orders'] = [$first, $second];
$out['status'] = $api->status($first->order);
$out['multiStatus'] = $api->multiStatus([$first->order, $second->order, 999999]);
$out['cancel'] = $api->cancel([$second->order, 999999]);
$out['refill'] = $api->refill($first->order);
$out['multiRefill'] = $api->multiRefill([$first->order]);
$out['refillStatus'] = $api->refillStatus(999999);
$out['multiRefillStatus'] = $api->multiRefillStatus([999999]);

// A long comment list: over 1 KiB of fields. Older libcurl versions send such
// a body with `Expect: 100-continue` and hold it back until the server says
// continue; newer ones send it at once (the class's call below). The raw call
// asks for the old behaviour explicitly and records the interim response.
$comments = [];
for ($i = 0; $i < 60; $i++) {
    $comments[] = "Comment number $i: what a great post, keep it up!";
}
$body = 'key=' . urlencode($key) . '&action=add&service=' . urlencode($commentsService)
    . '&link=' . urlencode('https://instagram.com/p/comments') . '&comments=' . urlencode(implode("\n", $comments));
$statusLines = [];
$ch = curl_init($url);
curl_setopt($ch, CURLOPT_RETURNTRANSFER, 1);
curl_setopt($ch, CURLOPT_POST, 1);
curl_setopt($ch, CURLOPT_POSTFIELDS, $body);
curl_setopt($ch, CURLOPT_HTTPHEADER, ['Expect: 100-continue']);
// Wait for the server's answer rather than libcurl's one-second fallback.
curl_setopt($ch, CURLOPT_EXPECT_100_TIMEOUT_MS, 30000);
curl_setopt($ch, CURLINFO_HEADER_OUT, true);
curl_setopt($ch, CURLOPT_HEADERFUNCTION, function ($ch, $line) use (&$statusLines) {
    if (strncmp($line, 'HTTP/', 5) === 0) {
        $statusLines[] = trim($line);
    }
    return strlen($line);
});
$raw = curl_exec($ch);
$out['expectSent'] = stripos((string)curl_getinfo($ch, CURLINFO_HEADER_OUT), 'Expect: 100-continue') !== false;
$out['statusLines'] = $statusLines;
$out['bodyBytes'] = strlen($body);
$out['longByRawCurl'] = json_decode((string)$raw);
curl_close($ch);
$out['longByClass'] = $api->order(['service' => $commentsService, 'link' => 'https://instagram.com/p/comments2', 'comments' => implode("\n", $comments)]);
$bad = new Api();
$bad->api_url = $url;
$bad->api_key = 'not-a-key';
$out['badKey'] = $bad->balance();

echo json_encode($out), "\n";
