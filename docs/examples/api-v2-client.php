<?php
// The client class most SMM panels hand their resellers, unchanged but for
// the URL: point $api_url at this server's /api/v2 and set $api_key to the
// key the operator issued (credit-order-api account v2-key ID).
class Api
{
    public $api_url = 'http://127.0.0.1:8080/api/v2';

    public $api_key = '';

    public function order($data)
    {
        $post = array_merge(['key' => $this->api_key, 'action' => 'add'], $data);
        return json_decode((string)$this->connect($post));
    }

    public function status($order_id)
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'status', 'order' => $order_id]));
    }

    public function multiStatus($order_ids)
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'status', 'orders' => implode(",", (array)$order_ids)]));
    }

    public function services()
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'services']));
    }

    public function refill(int $orderId)
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'refill', 'order' => $orderId]));
    }

    public function multiRefill(array $orderIds)
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'refill', 'orders' => implode(',', $orderIds)]), true);
    }

    public function refillStatus(int $refillId)
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'refill_status', 'refill' => $refillId]));
    }

    public function multiRefillStatus(array $refillIds)
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'refill_status', 'refills' => implode(',', $refillIds)]), true);
    }

    public function cancel(array $orderIds)
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'cancel', 'orders' => implode(',', $orderIds)]), true);
    }

    public function balance()
    {
        return json_decode($this->connect(['key' => $this->api_key, 'action' => 'balance']));
    }

    private function connect($post)
    {
        $_post = [];
        if (is_array($post)) {
            foreach ($post as $name => $value) {
                $_post[] = $name . '=' . urlencode($value);
            }
        }
        $ch = curl_init($this->api_url);
        curl_setopt($ch, CURLOPT_RETURNTRANSFER, 1);
        curl_setopt($ch, CURLOPT_POST, 1);
        curl_setopt($ch, CURLOPT_HEADER, 0);
        curl_setopt($ch, CURLOPT_SSL_VERIFYPEER, 0);
        if (is_array($post)) {
            curl_setopt($ch, CURLOPT_POSTFIELDS, join('&', $_post));
        }
        curl_setopt($ch, CURLOPT_USERAGENT, 'Mozilla/4.0 (compatible; MSIE 5.01; Windows NT 5.0)');
        $result = curl_exec($ch);
        if (curl_errno($ch) != 0 && empty($result)) {
            $result = false;
        }
        curl_close($ch);
        return $result;
    }
}
